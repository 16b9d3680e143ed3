"""Quote options executed on the devnet: what each one promises arrives on chain."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3

from crossfill.kinds.evm.config import evm_chains
from crossfill_client import QuoteRequest
from crossfill_client.models import Quote
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    balance,
    bridge_request,
    deposit_native,
    final_status,
    funded_user,
    request_quote,
    rpc_urls,
    usdc,
)
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.e2e.wire import validate_against
from tests.support.service import ServiceThread, StartService


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _usdc_bridge(devnet: RunningDevnet, user: str, recipient: str, **options: Any) -> QuoteRequest:
    """50 USDC from ORIGIN to DESTINATION, with `options`."""
    currencies = (usdc(devnet, ORIGIN), usdc(devnet, DESTINATION))
    return bridge_request(user, currencies, 50 * 10**6, recipient=recipient, **options)


def _executed(user_client: UserClient, user: LocalAccount, request: QuoteRequest) -> Quote:
    """The quote (its wire shape checked), executed with the user's wallet to success."""
    quote = user_client.quote(request)
    validate_against("quote", user_client.answered("/quote/v2"))
    succeeded(user_client.execute(quote, evm_wallet(user)))
    return quote


def test_a_gas_top_up_reaches_the_recipient_with_the_usdc(
    devnet: RunningDevnet, user_client: UserClient
) -> None:
    user, recipient = funded_user(devnet, usdc_amount=100 * 10**6), Account.create().address
    request = _usdc_bridge(devnet, user.address, recipient, topupGas=True, topupGasAmount="3000000")
    quote = _executed(user_client, user, request)
    topup = quote.details.currency_gas_topup
    assert topup is not None and topup.currency.chain_id == DESTINATION
    assert topup.currency.metadata is not None and topup.currency.metadata.is_native is True
    assert topup.amount_usd is not None and topup.amount_usd.startswith(("2.99", "3"))
    # The recipient, a fresh account, now holds the top-up and the bridged USDC.
    assert balance(devnet, DESTINATION, NATIVE, recipient) == topup.amount > 0
    received = balance(devnet, DESTINATION, usdc(devnet, DESTINATION), recipient)
    assert received == quote.details.currency_out.amount


def test_a_fixed_rate_bridge_delivers_the_input_less_its_spread(
    devnet: RunningDevnet, user_client: UserClient
) -> None:
    user, recipient = funded_user(devnet, usdc_amount=100 * 10**6), Account.create().address
    quote = _executed(
        user_client, user, _usdc_bridge(devnet, user.address, recipient, fixedRate="300")
    )
    details = quote.details
    assert details.is_fixed_rate is True
    assert details.fixed_rate_fee is not None
    assert details.fixed_rate_fee.model_dump() == {"usd": "1.5"}  # 3% of 50 USDC
    assert quote.fees.relayer is not None and quote.fees.relayer.amount == 1_500_000
    received = balance(devnet, DESTINATION, usdc(devnet, DESTINATION), recipient)
    assert received == details.currency_out.amount == 48_500_000


def test_refund_on_origin_is_where_a_refund_is_paid(service, devnet) -> None:
    """`refundOnOrigin` is honoured by design: an unfillable deposit is paid back on the origin
    chain, by its Depository."""
    user = funded_user(devnet)
    body = bridge_request(user.address, recipient=user.address, refundOnOrigin=True).wire()
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, body)
        underpaid = int(quote["details"]["currencyIn"]["amount"]) - 1000
        deposit_native(devnet, user, quote, underpaid)
        status = final_status(http, quote["steps"][0]["requestId"], until=frozenset({"refund"}))
    (refund_hash,) = status["txHashes"]
    origin = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    receipt = origin.eth.get_transaction_receipt(refund_hash)
    assert receipt["status"] == 1
    assert receipt["to"].lower() == evm_chains(devnet.deployment)[0].contracts.depository.lower()


def test_a_true_exact_output_pays_exactly_and_the_surplus_to_the_solver(
    devnet: RunningDevnet, user_client: UserClient
) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    destination_usdc = usdc(devnet, DESTINATION)
    solver = devnet.deployment.solver.address
    solver_before = balance(devnet, DESTINATION, destination_usdc, solver)
    request = bridge_request(
        user.address, (NATIVE, destination_usdc), 20 * 10**6, recipient=recipient,
        trade_type="EXACT_OUTPUT", enableTrueExactOutput=True,
    )  # fmt: skip
    quote = _executed(user_client, user, request)
    assert quote.details.currency_out.amount == 20 * 10**6
    assert balance(devnet, DESTINATION, destination_usdc, recipient) == 20 * 10**6
    # The swap bought with slippage head-room: what it got beyond the amount is the solver's.
    assert balance(devnet, DESTINATION, destination_usdc, solver) > solver_before
