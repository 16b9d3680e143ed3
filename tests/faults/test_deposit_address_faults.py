"""A deposit address's sweep through an origin RPC that fails: the broadcast's answer lost,
then the node answering 502 and dropping connections. The sweep is retried, never signed
twice, and the request fills once the RPC recovers; nothing is refunded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
import pytest
from eth_account import Account
from web3 import Web3
from web3.types import Wei

from crossfill.devnet.anvil import anvil_rpc
from crossfill.devnet.deploy import signing_web3
from crossfill.kinds.evm.config import evm_chains
from crossfill.types import TraceApi
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    balance,
    final_status,
    funded_user,
    request_quote,
    rpc_urls,
    usdc,
)
from tests.faults.conftest import behind_proxy
from tests.faults.rpc_proxy import Fault, RpcFaultProxy
from tests.support.service import StartService
from tests.support.waiting import wait_for
from tests.support.wallets.evm import pay_by_self_destruct, send_item

ETH = 10**18
USDC = 10**6
# Below the watcher's own batch of blocks (100).
LOG_BLOCKS_CAP = 20


def _sweeps_sent(web3: Web3, factory: str, after_block: int) -> int:
    """Mined transactions to the deposit-address factory after `after_block` (the head before
    the test's payment: an earlier test's sweep may be that very block)."""
    sent = 0
    for number in range(after_block + 1, web3.eth.block_number + 1):
        for tx in web3.eth.get_block(number, full_transactions=True)["transactions"]:
            assert isinstance(tx, Mapping)
            sent += str(tx.get("to") or "").lower() == factory.lower()
    return sent


def _native_body(user: str, recipient: str) -> dict[str, Any]:
    """A native bridge of 0.1 ETH paid to a deposit address of its own."""
    return {
        "user": user, "recipient": recipient,
        "originChainId": ORIGIN, "destinationChainId": DESTINATION,
        "originCurrency": NATIVE, "destinationCurrency": NATIVE,
        "amount": str(ETH // 10), "tradeType": "EXACT_INPUT", "useDepositAddress": True,
    }  # fmt: skip


def test_a_sweep_whose_answers_are_lost_or_refused_is_sent_once_and_fills(
    start_service: StartService, devnet, origin_proxy: RpcFaultProxy
) -> None:
    service = start_service(behind_proxy(devnet, origin_proxy), run_workers=True)
    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    factory = evm_chains(devnet.deployment)[0].contracts.deposit_address_factory
    assert factory is not None
    user, recipient = funded_user(devnet), Account.create().address
    body = _native_body(user.address, recipient)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, body)
        (step,) = quote["steps"]
        address = step["depositAddress"]
        # The broadcasts are refused, then dropped, then one reaches the node but its answer
        # is lost: the sweeper must find that one mined rather than sign another.
        origin_proxy.fail("eth_sendRawTransaction", Fault(status=502))
        head_before = web3.eth.block_number
        send_item(web3, user, step["items"][0]["data"])
        assert origin_proxy.wait_for_faults(2, timeout=30), "the sweeper never broadcast"
        origin_proxy.fail("eth_sendRawTransaction", Fault(drop=True))
        assert origin_proxy.wait_for_faults(4, timeout=30)
        origin_proxy.fail("eth_sendRawTransaction", Fault(lose_answer=True))
        assert origin_proxy.wait_for_faults(5, timeout=30)
        origin_proxy.heal()
        status = final_status(http, step["requestId"], timeout=60)
    assert status["status"] == "success", status
    assert balance(devnet, ORIGIN, NATIVE, address) == 0
    assert balance(devnet, DESTINATION, NATIVE, recipient) == int(
        quote["details"]["currencyOut"]["amount"]
    )
    assert _sweeps_sent(web3, factory, head_before) == 1


def test_a_transfer_made_while_the_service_was_down_is_found_through_a_node_capping_log_queries(
    start_service: StartService, devnet, origin_proxy: RpcFaultProxy
) -> None:
    """A USDC transfer to a deposit address while the service was down: once it is back, its
    watcher catches up over more blocks than the node lets one log query cover, narrows its
    batches until the node answers, and the request fills."""
    proxied = behind_proxy(devnet, origin_proxy)
    user, recipient = funded_user(devnet, usdc_amount=50 * USDC), Account.create().address
    body = {
        "user": user.address, "recipient": recipient,
        "originChainId": ORIGIN, "destinationChainId": DESTINATION,
        "originCurrency": usdc(devnet, ORIGIN), "destinationCurrency": usdc(devnet, DESTINATION),
        "amount": str(20 * USDC), "tradeType": "EXACT_INPUT", "useDepositAddress": True,
    }  # fmt: skip
    first = start_service(proxied, run_workers=True)
    with httpx.Client(base_url=first.base_url, timeout=10) as http:
        (step,) = request_quote(http, body)["steps"]
    first.stop()
    send_item(Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN])), user, step["items"][0]["data"])
    anvil_rpc(rpc_urls(devnet)[ORIGIN], "anvil_mine", [hex(4 * LOG_BLOCKS_CAP)])
    origin_proxy.max_log_blocks = LOG_BLOCKS_CAP
    second = start_service(proxied, run_workers=True)
    with httpx.Client(base_url=second.base_url, timeout=10) as http:
        assert final_status(http, step["requestId"], timeout=60)["status"] == "success"
    assert origin_proxy.refused_log_queries > 0


@pytest.mark.parametrize("traces", list(TraceApi))
def test_ether_a_contract_pays_is_found_once_the_nodes_traces_answer(
    start_service: StartService, devnet, origin_proxy: RpcFaultProxy, traces: TraceApi
) -> None:
    """A self-destructing contract pays a deposit address while the origin's node answers
    its traces 502, then from a node stuck behind, through an endpoint that takes no
    batches: the watch waits (nothing is skipped, nothing refunded), and once the node
    answers the payment is found, swept and filled."""
    proxied = behind_proxy(devnet, origin_proxy)
    origin, *others = evm_chains(proxied)
    traced = origin.model_copy(update={"trace_internal_transfers": traces})
    service = start_service(
        proxied.model_copy(update={"chains": (traced, *others)}), run_workers=True
    )
    user, recipient = funded_user(devnet), Account.create().address
    body = _native_body(user.address, recipient)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        (step,) = request_quote(http, body)["steps"]
        # Without batches, parity's traces are read block by block (`trace_block`).
        asked = ["debug_traceBlockByHash"] if traces is TraceApi.GETH else ["trace_block"]
        origin_proxy.refuse_batches = True
        for method in asked:
            origin_proxy.fail(method, Fault(status=502))
        payer = signing_web3(rpc_urls(devnet)[ORIGIN], user)
        address = step["depositAddress"].lower()
        assert pay_by_self_destruct(payer, user, address, Wei(ETH // 10))["status"] == 1
        assert origin_proxy.wait_for_faults(3, timeout=30)
        origin_proxy.faults.clear()
        origin_proxy.lag_blocks, origin_proxy.lag_everything = 50, True
        assert wait_for(lambda: origin_proxy.lagged > 3, timeout=30)
        assert balance(devnet, ORIGIN, NATIVE, address) == ETH // 10  # not swept meanwhile
        waiting = http.get("/intents/status/v3", params={"requestId": step["requestId"]})
        assert waiting.json()["status"] == "waiting"
        origin_proxy.heal()
        assert final_status(http, step["requestId"], timeout=60)["status"] == "success"
    assert balance(devnet, ORIGIN, NATIVE, address) == 0
    assert balance(devnet, DESTINATION, NATIVE, recipient) > 0
