"""`protocolVersion: "v1"` on the devnet: the deposit is ether paid to the solver through the
Receiver (no Depository escrow); the indexer reads it from the Receiver's log, the solver fills
as usual, and a deposit that cannot be filled is paid back from the solver's own inventory."""

from __future__ import annotations

import httpx
import pytest
from eth_account import Account
from web3 import Web3

from crossfill.devnet import accounts
from crossfill.kinds.evm.config import evm_chains
from crossfill_client import QuoteRequest
from crossfill_client.models import EvmTransactionData
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    REFUNDED,
    balance,
    bridge_request,
    final_status,
    funded_user,
    journal,
    request_quote,
    rpc_urls,
)
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.e2e.wire import validate_against
from tests.support.service import ServiceThread, StartService
from tests.support.wallets.evm import send_item


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _v1_request(user: str, recipient: str) -> QuoteRequest:
    return bridge_request(user, recipient=recipient, protocol_version="v1")


def test_a_v1_deposit_goes_to_the_solver_and_is_filled(
    devnet: RunningDevnet, user_client: UserClient
) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    origin = evm_chains(devnet.deployment)[0]
    depository_before = balance(devnet, ORIGIN, NATIVE, origin.contracts.depository)
    quote = user_client.quote(_v1_request(user.address, recipient))
    validate_against("quote", user_client.answered("/quote/v2"))
    (step,) = quote.steps
    item = step.items[0].data
    assert isinstance(item, EvmTransactionData) and quote.protocol is not None
    assert item.to == origin.contracts.receiver.lower()
    assert item.data == quote.protocol.v2.order_id
    result = user_client.execute(quote, evm_wallet(user))
    status = succeeded(result)
    (deposit,) = result.transactions
    assert deposit.step_id == "deposit" and status.in_tx_hashes == (deposit.tx_id,)
    # Nothing escrowed: the Receiver forwarded the ether to the solver at once.
    assert balance(devnet, ORIGIN, NATIVE, origin.contracts.receiver) == 0
    assert balance(devnet, ORIGIN, NATIVE, origin.contracts.depository) == depository_before
    received = balance(devnet, DESTINATION, NATIVE, recipient)
    assert received == quote.details.currency_out.amount


def test_an_underpaid_v1_deposit_is_refunded_by_the_solver(service, devnet: RunningDevnet) -> None:
    user = funded_user(devnet)
    origin_web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, _v1_request(user.address, Account.create().address).wire())
        validate_against("quote", quote)
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
