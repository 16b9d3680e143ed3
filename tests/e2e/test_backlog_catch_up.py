"""A restart after an outage: the deposits made while the service was away are a backlog, and a
deposit made after the restart does not wait behind it (the backlog is caught up beside the
live head, not ahead of it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3

from crossfill.contracts import calldata
from crossfill.devnet.anvil import anvil_rpc, set_native_balance
from crossfill.devnet.deploy import contract_at
from crossfill.kinds.evm.config import evm_chains
from crossfill.kinds.evm.indexer import BACKLOG_AFTER_BLOCKS, BACKLOG_SLICE_BLOCKS
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, ORIGIN, native_bridge, rpc_urls
from tests.support.service import ServiceProcess, service_settings
from tests.support.waiting import wait_for
from tests.support.wallets.evm import sign_item, wallet_fees

ETH = 10**18
OLD = 60
# Origin blocks mined after each old deposit: the backlog spans many of the indexer's slices.
SPREAD = 4 * BACKLOG_SLICE_BLOCKS // OLD + 1


def _quote(http: httpx.Client, user: LocalAccount) -> dict[str, Any]:
    body = native_bridge(user.address, amount=str(ETH // 100), recipient=Account.create().address)
    response = http.post("/quote/v2", json=body)
    assert response.status_code == 200, response.text
    quote: dict[str, Any] = response.json()
    return quote


def _deposit(web3: Web3, depository: str, user: LocalAccount, quote: dict[str, Any]) -> None:
    order_id = bytes.fromhex(quote["protocol"]["v2"]["orderId"][2:])
    deposit = {
        "to": depository,
        "data": calldata.deposit_native(user.address, order_id),
        "value": int(quote["details"]["currencyIn"]["amount"]),
        "chainId": ORIGIN,
    }
    signed = sign_item(user, deposit, nonce=0, fees=wallet_fees(web3), gas=100_000)
    web3.eth.send_raw_transaction(signed.raw_transaction)


def _fill_blocks(devnet: RunningDevnet) -> dict[str, int]:
    """Each filled order's fill block on the destination, by order id."""
    destination = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION]))
    filler = contract_at(destination, "Filler", evm_chains(devnet.deployment)[1].contracts.filler)
    return {
        "0x" + event.args["orderId"].hex(): int(event.blockNumber)
        for event in filler.events.OrderFilled().get_logs(from_block=0)
    }


def test_a_deposit_after_a_restart_is_filled_before_the_backlog_is_done(
    devnet: RunningDevnet, tmp_path: Path
) -> None:
    origin_rpc = rpc_urls(devnet)[ORIGIN]
    origin = Web3(Web3.HTTPProvider(origin_rpc))
    depository = evm_chains(devnet.deployment)[0].contracts.depository
    users = [Account.create() for _ in range(OLD + 1)]
    for user in users:
        set_native_balance(origin_rpc, user.address, ETH)
    service = ServiceProcess(service_settings(tmp_path, devnet.deployment_path))
    service.start()
    try:
        with httpx.Client(base_url=service.base_url, timeout=10) as http:
            quotes = [_quote(http, user) for user in users]
        service.kill()  # the outage: every old deposit is made meanwhile
        first = origin.eth.block_number
        for user, quote in zip(users[:OLD], quotes[:OLD], strict=True):
            _deposit(origin, depository, user, quote)
            anvil_rpc(origin_rpc, "anvil_mine", [hex(SPREAD)])
        assert origin.eth.block_number - first > BACKLOG_AFTER_BLOCKS

        service.start()
        _deposit(origin, depository, users[OLD], quotes[OLD])
        anvil_rpc(origin_rpc, "anvil_mine", [hex(2)])
        order_ids = [quote["protocol"]["v2"]["orderId"] for quote in quotes]
        new = order_ids[OLD]
        assert wait_for(lambda: new in _fill_blocks(devnet), timeout=60, interval=0.2)
        assert wait_for(
            lambda: set(order_ids) <= set(_fill_blocks(devnet)), timeout=180, interval=1
        )
    finally:
        service.stop()
    filled = _fill_blocks(devnet)
    old_fills = sorted(filled[order_id] for order_id in order_ids[:OLD])
    # Not behind the backlog: filled before its last order, though deposited after them all.
    assert filled[new] < old_fills[-1], (filled[new], old_fills)
