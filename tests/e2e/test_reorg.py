"""Reorgs of the origin chain, made with `anvil_reorg`, before and after a deposit is acted on."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_typing import HexStr
from sqlalchemy import select
from web3 import Web3

from crossfill.devnet.anvil import anvil_rpc, set_native_balance
from crossfill.devnet.deploy import contract_at
from crossfill.kinds.evm.config import evm_chains
from crossfill.store.tables import Deposit, Request
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    final_status,
    published_statuses,
    request_quote,
    rpc_urls,
)
from tests.support.database import rows_in
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps

ETH = 10**18
# Worth about $120,000 at the devnet price: the policy wants 4 confirmations.
LARGE = 40 * ETH
# Worth about $300: one confirmation.
SMALL = ETH // 10


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _read(service: ServiceThread, table: type[Deposit] | type[Request]) -> list[Any]:
    return rows_in(service.settings.database, select(table))


def _deposit(service: ServiceThread, tx_hash: str) -> Deposit | None:
    deposits: list[Deposit] = _read(service, Deposit)
    return next((row for row in deposits if row.tx_hash == tx_hash), None)


def _request(service: ServiceThread, request_id: str) -> Request:
    rows: list[Request] = _read(service, Request)
    return next(row for row in rows if row.id == request_id)


def _user(devnet: RunningDevnet) -> LocalAccount:
    user: LocalAccount = Account.create()
    set_native_balance(rpc_urls(devnet)[ORIGIN], user.address, 100 * ETH)
    return user


def _deposit_for(
    http: httpx.Client, devnet: RunningDevnet, user: LocalAccount, amount: int
) -> tuple[dict[str, Any], str]:
    quote = request_quote(
        http,
        {
            "user": user.address,
            "recipient": Account.create().address,
            "originChainId": ORIGIN,
            "destinationChainId": DESTINATION,
            "originCurrency": NATIVE,
            "destinationCurrency": NATIVE,
            "amount": str(amount),
            "tradeType": "EXACT_INPUT",
        },
    )
    return quote, execute_steps(quote, user, rpc_urls(devnet))["deposit"]


def _status(http: httpx.Client, request_id: str) -> dict[str, Any]:
    record: dict[str, Any] = http.get("/intents/status/v3", params={"requestId": request_id}).json()
    return record


def _filled(devnet: RunningDevnet, quote: dict[str, Any]) -> bool:
    destination = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION]))
    filler = contract_at(destination, "Filler", evm_chains(devnet.deployment)[1].contracts.filler)
    order_id = bytes.fromhex(quote["protocol"]["v2"]["orderId"][2:])
    return bool(filler.functions.filled(order_id).call())


def _reorg_back_to(rpc_url: str, block_number: int, reinclude: list[tuple[str, int]]) -> None:
    """Replace every block from `block_number` up; `reinclude` = (raw tx, new block offset)."""
    head = Web3(Web3.HTTPProvider(rpc_url)).eth.block_number
    anvil_rpc(rpc_url, "anvil_reorg", [head - block_number + 1, [list(p) for p in reinclude]])


def test_deposit_reorged_out_before_confirmation_is_not_filled(
    service, devnet: RunningDevnet
) -> None:
    origin_rpc = rpc_urls(devnet)[ORIGIN]
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote, deposit_hash = _deposit_for(http, devnet, _user(devnet), LARGE)
        request_id = quote["steps"][0]["requestId"]
        assert wait_for(
            lambda: _status(http, request_id)["inTxHashes"] == [deposit_hash], timeout=15
        )
        assert _status(http, request_id)["status"] == "waiting"

        anvil_rpc(origin_rpc, "anvil_reorg", [1, []])  # the deposit's block is replaced
        anvil_rpc(origin_rpc, "anvil_mine", [hex(6)])  # deep enough that it would be final

        def reorged() -> bool:
            deposit = _deposit(service, deposit_hash)
            return deposit is not None and deposit.state == "reorged"

        assert wait_for(reorged, timeout=15)
        time.sleep(1)  # a solver tick, had anything been left to fill
        final = _status(http, request_id)
    assert final["status"] == "waiting"
    assert final["inTxHashes"] == []
    assert not _filled(devnet, quote)


def test_deposit_reincluded_in_another_block_is_still_filled(
    service, devnet: RunningDevnet
) -> None:
    """Reorgs usually put a transaction back in a later block: the deposit must follow it."""
    origin_rpc = rpc_urls(devnet)[ORIGIN]
    origin = Web3(Web3.HTTPProvider(origin_rpc))
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote, deposit_hash = _deposit_for(http, devnet, _user(devnet), LARGE)
        request_id = quote["steps"][0]["requestId"]
        assert wait_for(
            lambda: _status(http, request_id)["inTxHashes"] == [deposit_hash], timeout=15
        )
        first_block = origin.eth.get_transaction_receipt(HexStr(deposit_hash))["blockNumber"]
        raw = origin.eth.get_raw_transaction(HexStr(deposit_hash)).to_0x_hex()
        anvil_rpc(origin_rpc, "anvil_mine", [hex(1)])  # 2 confirmations: still not enough

        _reorg_back_to(origin_rpc, first_block, reinclude=[(raw, 1)])  # one block later
        anvil_rpc(origin_rpc, "anvil_mine", [hex(6)])

        status = final_status(http, request_id)
    receipt = origin.eth.get_transaction_receipt(HexStr(deposit_hash))
    assert receipt["blockNumber"] == first_block + 1
    assert status["status"] == "success", status
    assert status["inTxHashes"] == [deposit_hash]
    deposit = _deposit(service, deposit_hash)
    assert deposit is not None
    assert deposit.block_hash == receipt["blockHash"].to_0x_hex()
    assert _filled(devnet, quote)


def test_deposit_reorged_out_after_the_fill_is_recorded(service, devnet: RunningDevnet) -> None:
    origin_rpc = rpc_urls(devnet)[ORIGIN]
    origin = Web3(Web3.HTTPProvider(origin_rpc))
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote, deposit_hash = _deposit_for(http, devnet, _user(devnet), SMALL)
        request_id = quote["steps"][0]["requestId"]
        assert final_status(http, request_id)["status"] == "success"
        block = origin.eth.get_transaction_receipt(HexStr(deposit_hash))["blockNumber"]

        _reorg_back_to(origin_rpc, block, reinclude=[])  # the deposit is gone for good
        anvil_rpc(origin_rpc, "anvil_mine", [hex(2)])

        def recorded() -> bool:
            deposit = _deposit(service, deposit_hash)
            return deposit is not None and deposit.state == "reorged"

        assert wait_for(recorded, timeout=15)
        final = _status(http, request_id)
    assert _request(service, request_id).fail_reason == "DEPOSIT_REORGED"
    assert final["status"] == "success"  # the fill happened; the loss is the operator's
    assert published_statuses(service, request_id)[-1] == "success"
    assert len(published_statuses(service, request_id)) == 5  # the reorg was announced
