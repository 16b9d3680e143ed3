"""Bridges on the devnet, driven only through the HTTP API and signed like a wallet would."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3

from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    balance,
    final_status,
    funded_user,
    published_statuses,
    request_quote,
    rpc_urls,
    usdc,
)
from tests.support.service import ServiceThread, StartService
from tests.support.wallets.evm import execute_steps


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _bridge(
    service: ServiceThread, devnet: RunningDevnet, user: LocalAccount, body: dict[str, Any]
):
    recipient = Account.create().address
    body = {
        "user": user.address,
        "recipient": recipient,
        "originChainId": ORIGIN,
        "destinationChainId": DESTINATION,
        "tradeType": "EXACT_INPUT",
        **body,
    }
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, body)
        request_id = quote["steps"][-1]["requestId"]
        before = balance(devnet, DESTINATION, body["destinationCurrency"], recipient)
        sent = execute_steps(quote, user, rpc_urls(devnet))
        hint = http.post(
            "/transactions/index", json={"txHash": sent["deposit"], "chainId": str(ORIGIN)}
        )
        assert hint.status_code == 200
        status = final_status(http, request_id)
    after = balance(devnet, DESTINATION, body["destinationCurrency"], recipient)
    return quote, status, sent, after - before


def _assert_filled(service, devnet, quote, status, sent, received) -> None:
    request_id = quote["steps"][-1]["requestId"]
    assert status["status"] == "success", status
    assert received == int(quote["details"]["currencyOut"]["amount"])
    assert status["inTxHashes"] == [sent["deposit"]]
    (fill_hash,) = status["txHashes"]
    destination = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION]))
    fill = destination.eth.get_transaction(fill_hash)
    assert destination.eth.get_transaction_receipt(fill_hash)["status"] == 1
    assert fill["input"][-32:].hex() == quote["protocol"]["v2"]["orderId"][2:]
    assert published_statuses(service, request_id) == [
        "waiting",
        "pending",
        "submitted",
        "success",
    ]


def test_native_bridge_arrives_in_full(service, devnet) -> None:
    user = funded_user(devnet)
    result = _bridge(
        service,
        devnet,
        user,
        {"originCurrency": NATIVE, "destinationCurrency": NATIVE, "amount": str(10**17)},
    )
    _assert_filled(service, devnet, *result)


def test_usdc_bridge_with_approval_arrives_in_full(service, devnet) -> None:
    user = funded_user(devnet, usdc_amount=50_000_000)
    usdc_in, usdc_out = usdc(devnet, ORIGIN).lower(), usdc(devnet, DESTINATION).lower()
    result = _bridge(
        service,
        devnet,
        user,
        {"originCurrency": usdc_in, "destinationCurrency": usdc_out, "amount": "20000000"},
    )
    quote = result[0]
    assert [step["id"] for step in quote["steps"]] == ["approve", "deposit"]
    _assert_filled(service, devnet, *result)


def test_implicit_usdc_deposit_by_tagged_transfer_arrives_in_full(service, devnet) -> None:
    user = funded_user(devnet, usdc_amount=50_000_000)
    usdc_in, usdc_out = usdc(devnet, ORIGIN).lower(), usdc(devnet, DESTINATION).lower()
    body = {
        "originCurrency": usdc_in,
        "destinationCurrency": usdc_out,
        "amount": "15000000",
        "explicitDeposit": False,
    }
    result = _bridge(service, devnet, user, body)
    quote = result[0]
    assert [step["id"] for step in quote["steps"]] == ["deposit"]
    assert quote["steps"][0]["items"][0]["data"]["to"] == usdc_in
    _assert_filled(service, devnet, *result)
