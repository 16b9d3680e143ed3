"""An origin RPC that fails: the indexer backs off instead of spinning, and catches up after."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from crossfill.config import Deployment
from crossfill.devnet.anvil import anvil_rpc
from crossfill.store.deposits import INDEXER
from crossfill.store.tables import ChainCursor
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    ORIGIN,
    final_status,
    funded_user,
    native_bridge,
    request_quote,
    usdc,
)
from tests.e2e.bridging import rpc_urls as devnet_rpc_urls
from tests.faults.conftest import behind_proxy
from tests.faults.rpc_proxy import EVERY_METHOD, Fault, RpcFaultProxy
from tests.support.database import rows_in
from tests.support.service import StartService
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps

HASH = "0x" + "cd" * 32
USDC_HELD = 40_000_000
LOG_BLOCKS_CAP = 20
CAUGHT_UP_BLOCKS = 60
MAX_REQUESTS_PER_SECOND = 40
GATEWAY_PAGE = "<html><body><h1>502 Bad Gateway</h1></body></html>"


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


@pytest.mark.parametrize("batches", ["batched", "refused"])
def test_a_deposit_answered_for_by_a_lagging_node_is_not_skipped(
    start_service: StartService, devnet, origin_proxy: RpcFaultProxy, batches: str
) -> None:
    """Logs come from a node two blocks behind the one that gives the head: the indexer must
    not move its cursor past blocks that node never saw, and finds the deposit once the
    lagging node is gone. Also on an endpoint that takes no batches, where the header and
    the logs of a block are separate calls, reaching different nodes."""
    origin_proxy.refuse_batches = batches == "refused"
    service = start_service(behind_proxy(devnet, origin_proxy), run_workers=True)
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, native_bridge(user.address))
        request_id = quote["steps"][0]["requestId"]
        # The scan at the head before the node lags (on a loaded machine it may still be
        # reading the user's funding): from then on, every block it reads is the lagging one's.
        head = int(str(anvil_rpc(devnet_rpc_urls(devnet)[ORIGIN], "eth_blockNumber", [])), 16)
        assert wait_for(lambda: _scanned_through(service.database) >= head, timeout=20)
        origin_proxy.lag_blocks = 2
        sent = execute_steps(quote, user, devnet_rpc_urls(devnet))
        receipt = anvil_rpc(
            devnet_rpc_urls(devnet)[ORIGIN], "eth_getTransactionReceipt", [sent["deposit"]]
        )
        deposit_block = int(receipt["blockNumber"], 16)  # type: ignore[index]
        # The lagging node has been asked for the deposit block's logs, and the scan gone on.
        assert wait_for(lambda: origin_proxy.lagged_log_block >= deposit_block, timeout=20)
        lagged = origin_proxy.lagged
        assert wait_for(lambda: origin_proxy.lagged >= lagged + 5, timeout=20)
        status = http.get("/intents/status/v3", params={"requestId": request_id}).json()
        assert status["status"] == "waiting"
        origin_proxy.lag_blocks = 0
        assert final_status(http, request_id)["status"] == "success"
    assert (origin_proxy.batches_refused > 0) == (batches == "refused")


def _scanned_through(database: str) -> int:
    """The origin block the service's indexer has read deposits through (-1 before any)."""
    found = rows_in(
        database,
        select(ChainCursor.block_number).where(
            ChainCursor.chain_id == ORIGIN, ChainCursor.role == INDEXER
        ),
    )
    return found[0] if found else -1


def test_batch_answers_in_another_order_are_matched_to_their_calls(
    start_service: StartService, devnet, origin_proxy: RpcFaultProxy
) -> None:
    """JSON-RPC lets a server answer a batch in any order (load balancers that spread a batch
    over nodes do): the quote's balance and allowance, read as one batch, must not swap (a
    balance read as the allowance would drop the needed approval), and the indexer's scan must
    still find the deposit."""
    service = start_service(behind_proxy(devnet, origin_proxy), run_workers=True)
    origin_proxy.reverse_batches = True
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        _bridge_usdc_without_allowance(http, devnet)
    assert origin_proxy.calls["eth_getLogs"] > 0  # the scans went through the proxy


def _bridge_usdc_without_allowance(http: httpx.Client, devnet: RunningDevnet) -> None:
    """A USDC bridge by a user who has approved nothing: the quote must read their balance
    and allowance right (the approve step stays), and the bridge succeed."""
    user = funded_user(devnet, usdc_amount=USDC_HELD)
    body = native_bridge(
        user.address,
        originCurrency=usdc(devnet, ORIGIN),
        destinationCurrency=usdc(devnet, DESTINATION),
        amount=str(USDC_HELD // 2),
    )
    quote = request_quote(http, body)
    assert [step["id"] for step in quote["steps"]] == ["approve", "deposit"]
    assert quote["details"]["userBalance"] == str(USDC_HELD)
    execute_steps(quote, user, devnet_rpc_urls(devnet))
    assert final_status(http, quote["steps"][0]["requestId"])["status"] == "success"


def test_endpoints_refusing_batches_are_read_one_call_at_a_time(
    start_service: StartService,
    devnet,
    origin_proxy: RpcFaultProxy,
    destination_proxy: RpcFaultProxy,
) -> None:
    """Some providers take no JSON-RPC batches and answer one error for the whole array. With
    both chains' endpoints so, the service reads one call at a time: a USDC quote still reads
    the user's balance and allowance (its approve step stays), the deposit is found by a scan
    block by block and filled on the destination. Each refusal is counted, and a batch is not
    tried again on every read."""
    origin_proxy.refuse_batches = destination_proxy.refuse_batches = True
    service = start_service(behind_proxy(devnet, origin_proxy, destination_proxy), run_workers=True)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        _bridge_usdc_without_allowance(http, devnet)
        metrics = http.get("/metrics").text
    assert origin_proxy.calls["eth_getLogs"] > 0  # one block's logs at a time, by its hash
    for proxy, chain_id in ((origin_proxy, ORIGIN), (destination_proxy, DESTINATION)):
        # Noted once per chain client, not once per read (hundreds were made).
        assert 1 <= proxy.batches_refused <= 3, (chain_id, proxy.batches_refused)
        refusals = f'crossfill_rpc_batches_refused_total{{chain_id="{chain_id}"}}'
        assert f"{refusals} {float(proxy.batches_refused)}" in metrics, metrics


def test_a_catch_up_without_batches_keeps_to_the_providers_rate_limit(
    start_service: StartService, devnet, origin_proxy: RpcFaultProxy
) -> None:
    """Providers taking no batches often limit requests a second too. A service restarted after
    a spell down catches up block by block (five calls a block): the calls answered 429 wait
    and go again, so the scan gets through instead of failing on its first refused call and
    meeting the same limit each time it is asked again."""
    proxied = behind_proxy(devnet, origin_proxy)
    quote = _deposited_while_down(start_service, devnet, proxied, blocks_after=CAUGHT_UP_BLOCKS)
    origin_proxy.refuse_batches = True
    origin_proxy.max_requests_per_second = MAX_REQUESTS_PER_SECOND
    second = start_service(proxied, run_workers=True)
    with httpx.Client(base_url=second.base_url, timeout=10) as http:
        # The catch-up takes about 20 s alone (five calls a block under 40 a second, shared
        # with the other workers' polls); a loaded machine may double it: it must get
        # through, not be quick.
        status = final_status(http, quote["steps"][0]["requestId"], timeout=120)
        assert status["status"] == "success"
    assert origin_proxy.rate_limited > 0 and origin_proxy.batches_refused > 0


def test_an_origin_rpc_answering_a_page_that_is_not_json_is_a_chain_failure(
    start_service: StartService, devnet, origin_proxy: RpcFaultProxy
) -> None:
    """A gateway in front of the node answers 200 with an HTML page: clients are not answered
    500, the chain shows as failing, and the deposit made meanwhile fills once it is healed."""
    service = start_service(behind_proxy(devnet, origin_proxy), run_workers=True)
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, native_bridge(user.address))
        origin_proxy.fail(EVERY_METHOD, Fault(page=GATEWAY_PAGE))
        execute_steps(quote, user, devnet_rpc_urls(devnet))
        assert wait_for(lambda: origin_proxy.faulted >= 5, timeout=10)
        # A user whose balance no earlier quote read: unknown, shown as none.
        quoted = http.post("/quote/v2", json=native_bridge(funded_user(devnet).address))
        assert quoted.status_code == 200, quoted.text
        assert quoted.json()["details"]["userBalance"] == "0"
        ready = http.get("/readyz")
        assert ready.status_code == 503, ready.text
        assert ready.json()["checks"]["chains"][str(ORIGIN)] != "ok"
        origin_proxy.heal()
        assert final_status(http, quote["steps"][0]["requestId"])["status"] == "success"


def test_a_node_capping_log_queries_narrows_the_catch_up_scan_and_finds_the_deposit(
    start_service: StartService, devnet, origin_proxy: RpcFaultProxy
) -> None:
    """Providers cap the blocks one eth_getLogs covers. A service restarted after a spell
    down catches up over more blocks than that: the scan narrows until the node answers,
    instead of asking the same refused range for ever, and the deposit made meanwhile fills."""
    proxied = behind_proxy(devnet, origin_proxy)
    quote = _deposited_while_down(start_service, devnet, proxied, blocks_after=4 * LOG_BLOCKS_CAP)
    origin_proxy.max_log_blocks = LOG_BLOCKS_CAP
    second = start_service(proxied, run_workers=True)
    with httpx.Client(base_url=second.base_url, timeout=10) as http:
        assert final_status(http, quote["steps"][0]["requestId"])["status"] == "success"
    assert origin_proxy.refused_log_queries > 0


def _deposited_while_down(
    start_service: StartService, devnet: RunningDevnet, deployment: Deployment, *, blocks_after: int
) -> dict[str, Any]:
    """A bridge quoted by a service that then stops; its deposit made while it is down, and
    `blocks_after` more blocks mined: what a service started again must catch up over."""
    first = start_service(deployment, run_workers=True)
    user = funded_user(devnet)
    with httpx.Client(base_url=first.base_url, timeout=10) as http:
        quote = request_quote(http, native_bridge(user.address))
    first.stop()
    execute_steps(quote, user, devnet_rpc_urls(devnet))
    anvil_rpc(devnet_rpc_urls(devnet)[ORIGIN], "anvil_mine", [hex(blocks_after)])
    return quote
