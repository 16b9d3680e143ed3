"""Quote options executed on the devnet: what each one promises arrives on chain."""

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
    deposit_native,
    final_status,
    funded_user,
    request_quote,
    rpc_urls,
    usdc,
)
from tests.e2e.conftest import validate_against
from tests.support.service import ServiceThread, StartService
from tests.support.wallets.evm import execute_steps


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _usdc_bridge(
    devnet: RunningDevnet, user: str, recipient: str, **options: Any
) -> dict[str, Any]:
    return {
        "user": user,
        "recipient": recipient,
        "originChainId": ORIGIN,
        "destinationChainId": DESTINATION,
        "originCurrency": usdc(devnet, ORIGIN),
        "destinationCurrency": usdc(devnet, DESTINATION),
        "amount": str(50 * 10**6),
        "tradeType": "EXACT_INPUT",
        **options,
    }


def _execute(
    service: ServiceThread, devnet: RunningDevnet, user: LocalAccount, body: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Quote, run the steps as a wallet, hint the deposit; the quote and the final status."""
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, body)
        validate_against("quote", quote)
        sent = execute_steps(quote, user, rpc_urls(devnet))
        http.post("/transactions/index", json={"txHash": sent["deposit"], "chainId": str(ORIGIN)})
        status = final_status(http, quote["steps"][-1]["requestId"])
    return quote, status


def test_a_gas_top_up_reaches_the_recipient_with_the_usdc(service, devnet) -> None:
    user, recipient = funded_user(devnet, usdc_amount=100 * 10**6), Account.create().address
    body = _usdc_bridge(devnet, user.address, recipient, topupGas=True, topupGasAmount="3000000")
    quote, status = _execute(service, devnet, user, body)
    assert status["status"] == "success", status
    topup = quote["details"]["currencyGasTopup"]
    assert topup["currency"]["chainId"] == DESTINATION
    assert topup["currency"]["metadata"]["isNative"] is True
    assert topup["amountUsd"].startswith(("2.99", "3"))
    # The recipient, a fresh account, now holds the top-up and the bridged USDC.
    assert balance(devnet, DESTINATION, NATIVE, recipient) == int(topup["amount"]) > 0
    received = balance(devnet, DESTINATION, usdc(devnet, DESTINATION), recipient)
    assert received == int(quote["details"]["currencyOut"]["amount"])


def test_a_fixed_rate_bridge_delivers_the_input_less_its_spread(service, devnet) -> None:
    user, recipient = funded_user(devnet, usdc_amount=100 * 10**6), Account.create().address
    quote, status = _execute(
        service, devnet, user, _usdc_bridge(devnet, user.address, recipient, fixedRate="300")
    )
    assert status["status"] == "success", status
    details = quote["details"]
    assert details["isFixedRate"] is True
    assert details["fixedRateFee"] == {"usd": "1.5"}  # 3% of 50 USDC
    assert int(quote["fees"]["relayer"]["amount"]) == 1_500_000
    received = balance(devnet, DESTINATION, usdc(devnet, DESTINATION), recipient)
    assert received == int(details["currencyOut"]["amount"]) == 48_500_000


def test_refund_on_origin_is_where_a_refund_is_paid(service, devnet) -> None:
    """`refundOnOrigin` is honoured by design: an unfillable deposit is paid back on the origin
    chain, by its Depository."""
    user = funded_user(devnet)
    body = {**_usdc_bridge(devnet, user.address, user.address), "refundOnOrigin": True}
    body.update(originCurrency=NATIVE, destinationCurrency=NATIVE, amount=str(10**17))
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, body)
        underpaid = int(quote["details"]["currencyIn"]["amount"]) - 1000
        deposit_native(devnet, user, quote, underpaid)
        status = final_status(http, quote["steps"][0]["requestId"], until=frozenset({"refund"}))
    (refund_hash,) = status["txHashes"]
    origin = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    receipt = origin.eth.get_transaction_receipt(refund_hash)
    assert receipt["status"] == 1
    assert receipt["to"].lower() == devnet.deployment.chains[0].contracts.depository.lower()


def test_a_true_exact_output_pays_exactly_and_the_surplus_to_the_solver(service, devnet) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    destination_usdc = usdc(devnet, DESTINATION)
    solver = devnet.deployment.solver.address
    solver_before = balance(devnet, DESTINATION, destination_usdc, solver)
    body = {
        **_usdc_bridge(devnet, user.address, recipient),
        "originCurrency": NATIVE,
        "tradeType": "EXACT_OUTPUT",
        "amount": str(20 * 10**6),
        "enableTrueExactOutput": True,
    }
    quote, status = _execute(service, devnet, user, body)
    assert status["status"] == "success", status
    assert quote["details"]["currencyOut"]["amount"] == str(20 * 10**6)
    assert balance(devnet, DESTINATION, destination_usdc, recipient) == 20 * 10**6
    # The swap bought with slippage head-room: what it got beyond the amount is the solver's.
    assert balance(devnet, DESTINATION, destination_usdc, solver) > solver_before
