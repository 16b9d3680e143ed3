"""`protocolVersion: "v1"` on the devnet: the deposit is ether paid to the solver through the
Receiver (no Depository escrow); the indexer reads it from the Receiver's log, the solver fills
as usual, and a deposit that cannot be filled is paid back from the solver's own inventory."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from eth_account import Account
from web3 import Web3

from crossfill.devnet import accounts
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    REFUNDED,
    balance,
    final_status,
    funded_user,
    journal,
    native_bridge,
    request_quote,
    rpc_urls,
)
from tests.e2e.conftest import validate_against
from tests.support.service import ServiceThread, StartService
from tests.support.wallets.evm import execute_steps, send_item


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _v1_quote(http: httpx.Client, user: str, recipient: str) -> dict[str, Any]:
    quote = request_quote(http, native_bridge(user, recipient=recipient, protocolVersion="v1"))
    validate_against("quote", quote)
    return quote


def test_a_v1_deposit_goes_to_the_solver_and_is_filled(service, devnet: RunningDevnet) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    origin = devnet.deployment.chains[0]
    depository_before = balance(devnet, ORIGIN, NATIVE, origin.contracts.depository)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = _v1_quote(http, user.address, recipient)
        (step,) = quote["steps"]
        item = step["items"][0]["data"]
        assert item["to"] == origin.contracts.receiver.lower()
        assert item["data"] == quote["protocol"]["v2"]["orderId"]
        sent = execute_steps(quote, user, rpc_urls(devnet))
        status = final_status(http, step["requestId"])
    assert status["status"] == "success", status
    assert status["inTxHashes"] == [sent["deposit"]]
    # Nothing escrowed: the Receiver forwarded the ether to the solver at once.
    assert balance(devnet, ORIGIN, NATIVE, origin.contracts.receiver) == 0
    assert balance(devnet, ORIGIN, NATIVE, origin.contracts.depository) == depository_before
    received = balance(devnet, DESTINATION, NATIVE, recipient)
    assert received == int(quote["details"]["currencyOut"]["amount"])


def test_an_underpaid_v1_deposit_is_refunded_by_the_solver(service, devnet: RunningDevnet) -> None:
    user = funded_user(devnet)
    origin_web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = _v1_quote(http, user.address, Account.create().address)
        request_id = quote["steps"][0]["requestId"]
        item = dict(quote["steps"][0]["items"][0]["data"])
        paid = int(item["value"]) // 2
        send_item(origin_web3, user, {**item, "value": str(paid)})
        before = balance(devnet, ORIGIN, NATIVE, user.address)
        status = final_status(http, request_id, until=REFUNDED)
    assert status["failReason"] == "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL"
    (refund_hash,) = status["txHashes"]
    refund = origin_web3.eth.get_transaction(refund_hash)
    receipt = origin_web3.eth.get_transaction_receipt(refund_hash)
    # The solver's own transfer (no Depository payout), journalled before it was sent.
    assert receipt["status"] == 1 and receipt["logs"] == []
    assert refund["from"] == accounts.solver().address
    assert str(refund["to"]).lower() == user.address.lower()
    returned = balance(devnet, ORIGIN, NATIVE, user.address) - before
    assert returned == refund["value"] and 0 < paid - returned < paid // 100
    refunds = [row for row in journal(service, request_id) if row.purpose.startswith("refund")]
    assert [row.tx_hash for row in refunds] == [refund_hash]
