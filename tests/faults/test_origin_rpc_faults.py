"""An origin RPC that fails: the indexer backs off instead of spinning, and catches up after."""

from __future__ import annotations

import time

import httpx

from tests.e2e.bridging import ORIGIN, final_status, funded_user, native_bridge, request_quote
from tests.e2e.bridging import rpc_urls as devnet_rpc_urls
from tests.e2e.conftest import StartService, wait_for
from tests.e2e.wallet import execute_steps
from tests.faults.conftest import behind_proxy
from tests.faults.rpc_proxy import EVERY_METHOD, Fault, RpcFaultProxy

HASH = "0x" + "cd" * 32


def test_the_indexer_backs_off_while_the_origin_rpc_fails_and_catches_up(
    start_service: StartService, devnet, origin_proxy: RpcFaultProxy
) -> None:
    service = start_service(behind_proxy(devnet, origin_proxy), run_workers=True)
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, native_bridge(user.address))
        origin_proxy.fail(EVERY_METHOD, Fault(status=502))
        # A client keeps hinting at its deposit while the origin RPC is down.
        sent = execute_steps(quote, user, devnet_rpc_urls(devnet))
        started, before = time.monotonic(), origin_proxy.faulted
        while time.monotonic() - started < 4:
            hint = {"txHash": sent["deposit"], "chainId": str(ORIGIN)}
            assert http.post("/transactions/index", json=hint).status_code == 200
            time.sleep(0.25)
        calls_per_second = (origin_proxy.faulted - before) / (time.monotonic() - started)
        origin_proxy.heal()
        status = final_status(http, quote["steps"][0]["requestId"])
    # Followers, indexer, refunder and sponsor collector of one chain, each backing off.
    assert calls_per_second < 15, calls_per_second
    assert status["status"] == "success"


def test_a_deposit_answered_for_by_a_lagging_node_is_not_skipped(
    start_service: StartService, devnet, origin_proxy: RpcFaultProxy
) -> None:
    """Logs come from a node two blocks behind the one that gives the head: the indexer must
    not move its cursor past blocks that node never saw, and finds the deposit once the
    lagging node is gone."""
    service = start_service(behind_proxy(devnet, origin_proxy), run_workers=True)
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, native_bridge(user.address))
        request_id = quote["steps"][0]["requestId"]
        origin_proxy.lag_blocks = 2
        execute_steps(quote, user, devnet_rpc_urls(devnet))
        assert wait_for(lambda: origin_proxy.lagged >= 5, timeout=20)
        status = http.get("/intents/status/v3", params={"requestId": request_id}).json()
        assert status["status"] == "waiting"
        origin_proxy.lag_blocks = 0
        assert final_status(http, request_id)["status"] == "success"
