"""`topupGas`: destination gas currency delivered with the fill, charged as relayer gas, and
committed to by the order and the fill plan."""

from __future__ import annotations

import pytest

from crossfill.app.fills import FillTerms, plan_fill
from crossfill.errors import BadRequest
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.money import to_usd_micros
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support.quote_fixtures import USDC, USER, body, quote

USDC_BRIDGE = {"originCurrency": USDC, "destinationCurrency": USDC, "amount": str(100 * 10**6)}


def test_a_top_up_is_worth_what_was_asked_and_paid_in_relayer_gas() -> None:
    plain = quote(body(**USDC_BRIDGE))
    topped = quote(body(**USDC_BRIDGE, topupGas=True, topupGasAmount="5000000"))
    native = topped.destination.native_currency
    value = to_usd_micros(topped.gas_topup, native.decimals, 3000 * 10**6)
    assert 4_999_990 <= value <= 5_000_000
    # $5 in USDC (6 decimals), rounded up, and the gas of one more payment (34,000 gas at
    # about 1.1 gwei, ETH at $3,000: about $0.11); the output shrinks by as much.
    extra = topped.split.relayer_gas - plain.split.relayer_gas
    assert 5_100_000 <= extra <= 5_150_000
    assert topped.amount_out == plain.amount_out - extra


def test_a_top_up_defaults_to_two_dollars() -> None:
    topped = quote(body(**USDC_BRIDGE, topupGas=True))
    assert topped.gas_topup == 2 * 10**18 // 3000


def test_the_order_and_the_fill_pay_the_top_up_to_the_recipient() -> None:
    topped = quote(body(**USDC_BRIDGE, topupGas=True))
    payments = topped.order.output.payments
    assert [p.currency.hex() for p in payments] == [USDC[2:], NATIVE_EVM_ADDRESS[2:]]
    assert payments[1].minimum_amount == topped.gas_topup
    plan = plan_fill(FillTerms.of_quote(topped), topped.destination)
    *_, topup = plan.payments
    assert (topup.recipient, topup.currency, topup.amount) == (
        topped.recipient,
        NATIVE_EVM_ADDRESS,
        topped.gas_topup,
    )
    assert topped.recipient.lower() == USER
    assert plan.value == topped.gas_topup


def test_a_top_up_rides_a_destination_swap_too() -> None:
    topped = quote(body(topupGas=True))  # ETH -> USDC: the swap spends native as well
    plan = plan_fill(FillTerms.of_quote(topped), topped.destination)
    assert plan.value == topped.swap_plan.amount_in + topped.gas_topup  # type: ignore[union-attr]
    assert plan.spends_amount == plan.value  # both come out of the solver's ether


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"topupGasAmount": "1000000"}, BadRequest),
        ({"topupGas": True, "topupGasAmount": "0"}, BadRequest),
        ({"topupGas": True, "topupGasAmount": "$1"}, BadRequest),
        ({"topupGas": True, "topupGasAmount": str(10**9)}, BadRequest),
        ({"topupGas": True, "destinationCurrency": NATIVE_EVM_ADDRESS}, QuoteError),
        ({"topupGas": True, "destinationChainId": 900001}, QuoteError),
    ],
)
def test_a_top_up_that_cannot_be_delivered_is_refused(
    fields: dict[str, object], error: type[Exception]
) -> None:
    with pytest.raises(error) as refused:
        quote(body(**{**USDC_BRIDGE, **fields}))
    assert "topupGas" in str(refused.value)
