"""Quote options that change what is quoted (`fixedRate`), and the ones refused clearly
because they belong to a feature not offered: none is accepted and silently ignored."""

from __future__ import annotations

import pytest

from crossfill.app.fills import FillTerms, plan_fill
from crossfill.contracts.calldata import erc20_transfer
from crossfill.contracts.router_calls import sweep_call
from crossfill.errors import BadRequest
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.response import quote_wire
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support.quote_fixtures import (
    CHAINS,
    CONTRACT,
    SOLVER,
    USDC,
    body,
    deployment,
    quote,
    views,
)

USDC_BRIDGE = {"originCurrency": USDC, "destinationCurrency": USDC, "amount": str(100 * 10**6)}


def test_a_fixed_rate_is_the_whole_fee_gas_included() -> None:
    fixed = quote(body(**USDC_BRIDGE, fixedRate="100"))
    split = fixed.split
    assert split.relayer == 1_000_000  # 1% of 100 USDC, whatever gas costs
    assert split.relayer_gas > 0 and split.relayer_service == 1_000_000 - split.relayer_gas
    assert fixed.amount_out == 99 * 10**6
    details = quote_wire(fixed, allowance=None, user_balance=None)["details"]
    assert details["isFixedRate"] is True
    assert details["fixedRateFee"] == {"usd": "1"}


def test_a_fixed_rate_holds_while_gas_prices_move() -> None:
    config = deployment()
    cheap = quote(body(**USDC_BRIDGE, fixedRate="200"), config, views(config, base_fee=10**9))
    dear = quote(body(**USDC_BRIDGE, fixedRate="200"), config, views(config, base_fee=3 * 10**9))
    assert cheap.amount_out == dear.amount_out
    assert dear.split.relayer_gas > cheap.split.relayer_gas


def test_a_fixed_rate_for_an_exact_output_keeps_the_output() -> None:
    fixed = quote(body(**USDC_BRIDGE, fixedRate="100", tradeType="EXACT_OUTPUT"))
    assert fixed.amount_out == 100 * 10**6
    assert fixed.split.amount_in == fixed.amount_out + fixed.split.relayer
    assert fixed.split.relayer * 10_000 // fixed.split.amount_in == 100


def test_a_floating_quote_has_no_fixed_rate_fee() -> None:
    details = quote_wire(quote(body(**USDC_BRIDGE)), allowance=None, user_balance=None)["details"]
    assert details["fixedRateFee"] is None


def test_a_fixed_rate_below_the_fees_is_refused_naming_the_least_rate() -> None:
    with pytest.raises(QuoteError) as refused:
        quote(body(**USDC_BRIDGE, fixedRate="5"))
    assert refused.value.error_code == "AMOUNT_TOO_LOW"
    assert "ask for at least" in refused.value.message


@pytest.mark.parametrize(
    ("fields", "error", "error_code"),
    [
        ({**USDC_BRIDGE, "fixedRate": "1.5"}, BadRequest, None),
        ({**USDC_BRIDGE, "fixedRate": "10000"}, BadRequest, None),
        ({**USDC_BRIDGE, "fixedRate": "100", "topupGas": True}, BadRequest, None),
        ({"fixedRate": "100"}, QuoteError, "UNSUPPORTED_ROUTE"),  # ETH -> USDC, a swap
        (
            {**USDC_BRIDGE, "fixedRate": "6000", "appFees": [{"recipient": USDC, "fee": "5000"}]},
            QuoteError,
            "AMOUNT_TOO_LOW",
        ),
    ],
)
def test_a_fixed_rate_that_cannot_hold_is_refused(
    fields: dict[str, object], error: type[Exception], error_code: str | None
) -> None:
    with pytest.raises(error) as refused:
        quote(body(**fields))
    assert "fixedRate" in str(refused.value)
    if error_code is not None:
        assert getattr(refused.value, "error_code", None) == error_code


@pytest.mark.parametrize(
    ("field", "value", "error_code"),
    [
        # Deposit-address options without `useDepositAddress`, or where no factory is deployed.
        ("recoveryAddress", "0x" + "cd" * 20, "UNSUPPORTED_EXECUTION_TYPE"),
        ("strict", True, "UNSUPPORTED_EXECUTION_TYPE"),
        ("depositFeePayer", "11111111111111111111111111111111", "UNSUPPORTED_EXECUTION_TYPE"),
        ("useExternalLiquidity", True, "UNSUPPORTED_ROUTE"),
        ("useDepositAddress", True, "UNSUPPORTED_EXECUTION_TYPE"),
        ("usePermit", True, "UNSUPPORTED_EXECUTION_TYPE"),  # of ETH: no permits
        ("protocolVersion", "v3", "UNSUPPORTED_EXECUTION_TYPE"),
    ],
)
def test_an_option_of_a_feature_not_offered_is_refused_by_name(
    field: str, value: object, error_code: str
) -> None:
    with pytest.raises(QuoteError) as refused:
        quote(body(**{field: value}))
    assert refused.value.error_code == error_code
    assert field in refused.value.message


@pytest.mark.parametrize(
    "fields",
    [
        {"refundOnOrigin": True},  # refunds are always paid on the origin chain
        {"refundOnOrigin": False},
        {"strict": False},
        {"useExternalLiquidity": False},
        {"protocolVersion": "preferV2"},
        # Without a swap an exact output has no surplus to send anywhere.
        {**USDC_BRIDGE, "tradeType": "EXACT_OUTPUT", "enableTrueExactOutput": True},
        {"enableTrueExactOutput": True},  # exact input: the whole output is the recipient's
    ],
)
def test_options_that_hold_by_design_are_accepted(fields: dict[str, object]) -> None:
    assert quote(body(**fields)).amount_out > 0


def test_true_exact_output_pays_the_amount_and_the_surplus_to_the_solver() -> None:
    exact = quote(body(tradeType="EXACT_OUTPUT", amount="1000000", enableTrueExactOutput=True))
    plain = quote(body(tradeType="EXACT_OUTPUT", amount="1000000"))
    assert plain.amount_out > 1_000_000  # the surplus, the recipient's by default
    assert exact.amount_out == exact.minimum_out == 1_000_000
    plan = plan_fill(FillTerms.of_quote(exact), exact.destination)
    *_, pay, sweep = plan.calls
    assert pay.target == USDC and pay.data == erc20_transfer(exact.recipient, 1_000_000)
    assert sweep.data == sweep_call(CONTRACT, USDC, SOLVER)[3]


@pytest.mark.parametrize(
    "fields",
    [
        {"tradeType": "EXPECTED_OUTPUT", "amount": "1000000"},
        {"tradeType": "EXACT_OUTPUT", "amount": "1000000", "destinationChainId": CHAINS[0]},
        {
            "tradeType": "EXACT_OUTPUT",
            "originCurrency": USDC,
            "destinationCurrency": NATIVE_EVM_ADDRESS,
            "amount": str(10**16),
        },
    ],
)
def test_true_exact_output_where_it_cannot_hold_is_refused(fields: dict[str, object]) -> None:
    with pytest.raises(QuoteError) as refused:
        quote(body(**fields, enableTrueExactOutput=True))
    assert "enableTrueExactOutput" in refused.value.message


def test_native_bridge_keeps_its_rate_fixed_without_a_fee_figure() -> None:
    plain = quote(body(destinationCurrency=NATIVE_EVM_ADDRESS))
    details = quote_wire(plain, allowance=None, user_balance=None)["details"]
    assert details["isFixedRate"] is True and details["fixedRateFee"] is None
