"""Deposits sent in the worst order: whatever reaches the Depository for an order is filled,
refunded, or kept as too small to return, and a stranger's deposit never decides another's
request."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_typing import HexStr
from sqlalchemy import select
from web3 import Web3

from crossfill.store.tables import Deposit
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    REFUNDED,
    balance,
    deposit_native,
    final_status,
    funded_user,
    native_bridge,
    request_quote,
    rpc_urls,
)
from tests.support.database import rows_in
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps

MILLI_ETH = 10**15


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _quote(http: httpx.Client, user: LocalAccount, amount: int) -> dict[str, Any]:
    body = native_bridge(user.address, amount=str(amount), recipient=Account.create().address)
    return request_quote(http, body)


def _deposits_of(service: ServiceThread, tx_hash: str) -> list[Deposit]:
    query = select(Deposit).where(Deposit.tx_hash == tx_hash).order_by(Deposit.id)
    return rows_in(service.settings.database, query)


def _settled(service: ServiceThread, tx_hash: str, parts: int = 1) -> list[Deposit]:
    """The deposit's parts once every one of them is refunded or kept."""
    rows: list[Deposit] = []

    def done() -> bool:
        rows[:] = _deposits_of(service, tx_hash)
        return len(rows) == parts and all(row.refund_status in {"done", "skipped"} for row in rows)

    assert wait_for(done, timeout=40, interval=0.3), rows
    return rows


def _block_of(devnet: RunningDevnet, tx_hash: str) -> int:
    origin = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    return int(origin.eth.get_transaction_receipt(HexStr(tx_hash))["blockNumber"])


def test_a_front_running_wei_cannot_decide_the_victims_request(service, devnet) -> None:
    """The attacker reads the victim's order id and deposits one wei for it first: the wei is
    kept as too small to return, and the victim's own deposit fills the request."""
    victim, attacker = funded_user(devnet), funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = _quote(http, victim, 10 * MILLI_ETH)
        request_id = quote["steps"][0]["requestId"]
        dust = deposit_native(devnet, attacker, quote, 1)
        _settled(service, dust)
        paid = execute_steps(quote, victim, rpc_urls(devnet))["deposit"]
        status = final_status(http, request_id)
    assert status["status"] == "success", status
    assert status["inTxHashes"] == [paid]
    (kept,) = _deposits_of(service, dust)
    assert (kept.request_id, kept.refund_fail_reason) == (None, "AMOUNT_TOO_LOW_TO_REFUND")


def test_a_retry_after_a_refund_is_refunded_too(service, devnet) -> None:
    """Too little, refunded; then the full amount to the same order: not stranded, returned to
    its sender in full but for the refund's gas."""
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = _quote(http, user, 10 * MILLI_ETH)
        request_id = quote["steps"][0]["requestId"]
        deposit_native(devnet, user, quote, 5 * MILLI_ETH)
        first = final_status(http, request_id, until=REFUNDED)
        assert first["failReason"] == "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL"
        retry = deposit_native(devnet, user, quote, 10 * MILLI_ETH)
        # Read at the retry's own block: its refund may be mined before a read of the latest.
        after_sending = balance(devnet, ORIGIN, NATIVE, user.address, _block_of(devnet, retry))
        (row,) = _settled(service, retry)
        status = http.get("/intents/status/v3", params={"requestId": request_id}).json()
    assert (row.outcome, row.refund_status) == ("REQUEST_ENDED", "done")
    returned = balance(devnet, ORIGIN, NATIVE, user.address) - after_sending
    assert returned == int(row.refund_amount or 0)
    assert 0 < 10 * MILLI_ETH - returned < MILLI_ETH
    assert status["status"] == "refund"  # the request is the first deposit's, undisturbed
    assert retry not in status["inTxHashes"]


def test_an_overpaid_deposit_fills_the_quote_and_refunds_the_excess(service, devnet) -> None:
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = _quote(http, user, 10 * MILLI_ETH)
        request_id = quote["steps"][0]["requestId"]
        quoted_in = int(quote["details"]["currencyIn"]["amount"])
        quoted_out = int(quote["details"]["currencyOut"]["amount"])
        recipient = quote["details"]["recipient"]
        paid = deposit_native(devnet, user, quote, 3 * quoted_in)
        after_sending = balance(devnet, ORIGIN, NATIVE, user.address)
        status = final_status(http, request_id)
        whole, excess = _settled_parts(service, paid)
    assert status["status"] == "success"
    assert balance(devnet, DESTINATION, NATIVE, recipient) == quoted_out
    assert (whole.outcome, int(whole.amount), whole.refund_status) == (
        "ACCEPTED",
        quoted_in,
        None,
    )
    assert (excess.outcome, int(excess.amount), excess.refund_status) == (
        "AMOUNT_ABOVE_QUOTE",
        2 * quoted_in,
        "done",
    )
    returned = balance(devnet, ORIGIN, NATIVE, user.address) - after_sending
    assert returned == int(excess.refund_amount or 0)
    assert 0 < 2 * quoted_in - returned < MILLI_ETH


def _settled_parts(service: ServiceThread, tx_hash: str) -> tuple[Deposit, Deposit]:
    """An accepted deposit and the excess split off it, once the excess is refunded."""
    rows: list[Deposit] = []

    def refunded() -> bool:
        rows[:] = _deposits_of(service, tx_hash)
        return len(rows) == 2 and rows[1].refund_status == "done"

    assert wait_for(refunded, timeout=40, interval=0.3), rows
    return rows[0], rows[1]
