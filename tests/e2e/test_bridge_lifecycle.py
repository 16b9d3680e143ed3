"""Bridges on the devnet as a user makes them with the Python client: quoted over the HTTP
API, the quote's steps signed and sent like a wallet would, followed to the fill."""

from __future__ import annotations

from typing import Any

import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_typing import HexStr
from web3 import Web3

from crossfill_client import ExecutionResult
from crossfill_client.models import EvmTransactionData, Quote
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    balance,
    bridge_request,
    funded_user,
    published_statuses,
    rpc_urls,
    usdc,
)
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.support.service import ServiceThread, StartService

Bridged = tuple[Quote, ExecutionResult, int]


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _bridge(
    devnet: RunningDevnet,
    user_client: UserClient,
    user: LocalAccount,
    currencies: tuple[str, str],
    amount: int,
    **fields: Any,
) -> Bridged:
    """Quote `amount` from ORIGIN to a new recipient on DESTINATION and execute it: the quote,
    what the client did, what the recipient received."""
    recipient = Account.create().address
    quote = user_client.quote(
        bridge_request(user.address, currencies, amount, recipient=recipient, **fields)
    )
    before = balance(devnet, DESTINATION, currencies[1], recipient)
    result = user_client.execute(quote, evm_wallet(user))
    return quote, result, balance(devnet, DESTINATION, currencies[1], recipient) - before


def _assert_filled(
    service: ServiceThread, devnet: RunningDevnet, user_client: UserClient, bridged: Bridged
) -> None:
    quote, result, received = bridged
    status = succeeded(result)
    assert received == quote.details.currency_out.amount
    (deposit,) = [sent for sent in result.transactions if sent.step_id == "deposit"]
    assert status.in_tx_hashes == (deposit.tx_id,)
    # The client hinted the deposit to the service, which took the hint.
    assert user_client.hints_answered() == [200]
    (fill_hash,) = (HexStr(tx_hash) for tx_hash in status.tx_hashes)
    destination = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION]))
    fill = destination.eth.get_transaction(fill_hash)
    assert destination.eth.get_transaction_receipt(fill_hash)["status"] == 1
    assert quote.protocol is not None
    assert fill["input"][-32:].hex() == quote.protocol.v2.order_id[2:]
    assert published_statuses(service, quote.request_id) == [
        "waiting",
        "pending",
        "submitted",
        "success",
    ]


def test_native_bridge_arrives_in_full(
    service: ServiceThread, devnet: RunningDevnet, user_client: UserClient
) -> None:
    user = funded_user(devnet)
    bridged = _bridge(devnet, user_client, user, (NATIVE, NATIVE), 10**17)
    _assert_filled(service, devnet, user_client, bridged)


def test_usdc_bridge_with_approval_arrives_in_full(
    service: ServiceThread, devnet: RunningDevnet, user_client: UserClient
) -> None:
    user = funded_user(devnet, usdc_amount=50_000_000)
    usdc_in, usdc_out = usdc(devnet, ORIGIN).lower(), usdc(devnet, DESTINATION).lower()
    bridged = _bridge(devnet, user_client, user, (usdc_in, usdc_out), 20_000_000)
    quote = bridged[0]
    assert [step.id for step in quote.steps] == ["approve", "deposit"]
    _assert_filled(service, devnet, user_client, bridged)


def test_implicit_usdc_deposit_by_tagged_transfer_arrives_in_full(
    service: ServiceThread, devnet: RunningDevnet, user_client: UserClient
) -> None:
    user = funded_user(devnet, usdc_amount=50_000_000)
    usdc_in, usdc_out = usdc(devnet, ORIGIN).lower(), usdc(devnet, DESTINATION).lower()
    bridged = _bridge(
        devnet, user_client, user, (usdc_in, usdc_out), 15_000_000, explicitDeposit=False
    )
    quote = bridged[0]
    assert [step.id for step in quote.steps] == ["deposit"]
    item = quote.steps[0].items[0].data
    assert isinstance(item, EvmTransactionData) and item.to == usdc_in
    _assert_filled(service, devnet, user_client, bridged)
