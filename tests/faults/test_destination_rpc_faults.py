"""A destination RPC that fails is a reason to wait, never to refund: only the contract's own
revert may refuse an order."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from eth_account import Account

from crossfill.devnet.anvil import anvil_rpc
from crossfill.kinds.evm.client import EvmClient
from crossfill.kinds.evm.config import evm_chain
from crossfill.metrics import Metrics
from crossfill.types import ChainId
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    balance,
    final_status,
    funded_user,
    native_bridge,
    request_quote,
    rpc_urls,
)
from tests.faults.conftest import behind_proxy
from tests.faults.rpc_proxy import EVERY_METHOD, Fault, RpcFaultProxy
from tests.support.service import StartService
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps

LOG_BLOCKS_CAP = 20


def _status(http: httpx.Client, request_id: str) -> str:
    status: str = http.get("/intents/status/v3", params={"requestId": request_id}).json()["status"]
    return status


def _heal_then_filled(http: httpx.Client, proxy: RpcFaultProxy, request_id: str) -> None:
    proxy.heal()
    status = final_status(http, request_id)
    assert status["status"] == "success", status


@pytest.mark.parametrize(
    "fault",
    [Fault(status=502), Fault(status=429, retry_after=1), Fault(drop=True)],
    ids=["502", "429", "dropped"],
)
def test_a_failing_fill_simulation_waits_and_fills_once_the_rpc_recovers(
    start_service: StartService, devnet, destination_proxy: RpcFaultProxy, fault: Fault
) -> None:
    service = start_service(behind_proxy(devnet, destination_proxy), run_workers=True)
    user, recipient = funded_user(devnet), Account.create().address
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, native_bridge(user.address, recipient=recipient))
        request_id = quote["steps"][0]["requestId"]
        destination_proxy.fail("eth_estimateGas", fault)
        execute_steps(quote, user, rpc_urls(devnet))
        assert destination_proxy.wait_for_faults(2, timeout=20), "the solver never simulated"
        assert _status(http, request_id) == "pending"
        _heal_then_filled(http, destination_proxy, request_id)
    assert balance(devnet, DESTINATION, NATIVE, recipient) > 0


def test_a_restart_while_the_destination_rpc_is_down_refunds_nothing(
    start_service: StartService, devnet, destination_proxy: RpcFaultProxy
) -> None:
    """The solver's balance is unknown until the chain answers: the fill waits for it."""
    deployment = behind_proxy(devnet, destination_proxy)
    quoting = start_service(deployment)
    user, recipient = funded_user(devnet), Account.create().address
    with httpx.Client(base_url=quoting.base_url, timeout=10) as http:
        quote = request_quote(http, native_bridge(user.address, recipient=recipient))
    quoting.stop()
    destination_proxy.fail(EVERY_METHOD, Fault(status=502))
    service = start_service(deployment, run_workers=True)
    request_id = quote["steps"][0]["requestId"]
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        execute_steps(quote, user, rpc_urls(devnet))
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            assert _status(http, request_id) in {"waiting", "pending"}
            time.sleep(0.2)
        assert _status(http, request_id) == "pending"
        _heal_then_filled(http, destination_proxy, request_id)
    assert balance(devnet, DESTINATION, NATIVE, recipient) > 0


def test_a_fill_whose_broadcast_answer_is_lost_completes_in_seconds(
    start_service: StartService, devnet, destination_proxy: RpcFaultProxy
) -> None:
    """The node took the fill but its answer was lost: the journalled fill is found and
    tracked at the next attempt (seconds), not after the request's 60 s lease."""
    service = start_service(behind_proxy(devnet, destination_proxy), run_workers=True)
    user, recipient = funded_user(devnet), Account.create().address
    destination_proxy.fail("eth_sendRawTransaction", Fault(lose_answer=True))
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, native_bridge(user.address, recipient=recipient))
        execute_steps(quote, user, rpc_urls(devnet))
        status = final_status(http, quote["steps"][0]["requestId"], timeout=20)
    assert status["status"] == "success", status
    assert destination_proxy.faulted >= 1
    assert balance(devnet, DESTINATION, NATIVE, recipient) > 0


def test_chains_show_a_chain_the_service_cannot_read_and_when_it_recovers(
    start_service: StartService, devnet, destination_proxy: RpcFaultProxy
) -> None:
    service = start_service(behind_proxy(devnet, destination_proxy))
    with httpx.Client(base_url=service.base_url, timeout=10) as http:

        def message() -> str | None:
            chains = {c["id"]: c for c in http.get("/chains").json()["chains"]}
            shown: str | None = chains[DESTINATION]["statusMessage"]
            return shown

        assert message() is None
        destination_proxy.fail(EVERY_METHOD, Fault(status=502))
        assert wait_for(lambda: message() is not None, timeout=10)
        assert "127.0.0.1" not in str(message())  # no endpoint shown to clients
        destination_proxy.heal()
        assert wait_for(lambda: message() is None, timeout=10)


def test_an_orders_fill_is_found_through_a_node_capping_log_queries(
    start_service: StartService, devnet, destination_proxy: RpcFaultProxy
) -> None:
    """The solver looks up an order's fill by its OrderFilled log when its own journal has
    none (the Filler says AlreadyFilled, or the fill's nonce went elsewhere). Through a node
    that caps the blocks one log query covers, the search narrows its windows and stops at
    the request's creation instead of asking from block 0 (refused for ever)."""
    service = start_service(run_workers=True)
    user, recipient = funded_user(devnet), Account.create().address
    started = int(time.time()) - 1
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, native_bridge(user.address, recipient=recipient))
        execute_steps(quote, user, rpc_urls(devnet))
        status = final_status(http, quote["steps"][0]["requestId"])
    anvil_rpc(rpc_urls(devnet)[DESTINATION], "anvil_mine", [hex(3 * LOG_BLOCKS_CAP)])
    destination_proxy.max_log_blocks = LOG_BLOCKS_CAP
    destination = evm_chain(devnet.deployment, DESTINATION)
    assert destination is not None
    found = asyncio.run(
        _fills_of(
            destination_proxy.url,
            destination.contracts.filler,
            quote["protocol"]["v2"]["orderId"],
            not_before=started,
        )
    )
    assert found == [status["txHashes"][0]]
    assert destination_proxy.refused_log_queries > 0


async def _fills_of(rpc_url: str, filler: str, order_id: str, *, not_before: int) -> list[str]:
    client = EvmClient(ChainId(DESTINATION), rpc_url, timeout_seconds=5, metrics=Metrics())
    try:
        return await client.fill_tx_hashes(filler, order_id, not_before=not_before)
    finally:
        await client.close()
