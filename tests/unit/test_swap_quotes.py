"""Quotes planned against hand-set pools: amounts, USD reconciliation, trade types, errors."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crossfill.errors import BadRequest
from crossfill.kinds.evm.market import MarketSnapshot
from crossfill.quoting.errors import QuoteError, QuoteUnavailable
from crossfill.quoting.fees import BPS
from crossfill.quoting.legs import RouteKind
from crossfill.quoting.response import quote_wire
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support import quote_fixtures as fx

app_fee_lists = st.lists(
    st.tuples(st.integers(min_value=1, max_value=2**160 - 1), st.integers(0, 300)), max_size=3
).map(lambda fees: [{"recipient": f"0x{r:040x}", "fee": str(bps)} for r, bps in fees])


def _usd(text: str) -> Decimal:
    return Decimal(text)


def _reconciles_in_usd(wire: dict[str, Any]) -> None:
    details, fees = wire["details"], wire["fees"]
    paid = _usd(details["currencyIn"]["amountUsd"])
    received = _usd(details["currencyOut"]["amountUsd"])
    charged = sum(_usd(fees[name]["amountUsd"]) for name in ("relayerGas", "relayerService", "app"))
    swap = _usd(details["swapImpact"]["usd"])
    assert _usd(details["totalImpact"]["usd"]) == received - paid
    assert received == paid - charged + swap  # output + fees - impact == input, to the micro-USD
    expanded = details["expandedPriceImpact"]
    assert sum(_usd(part["usd"]) for part in expanded.values()) == received - paid


@settings(max_examples=60, deadline=None)
@given(
    amount=st.integers(min_value=10**15, max_value=20 * fx.ETHER),
    slippage=st.integers(min_value=0, max_value=500),
    app_fees=app_fee_lists,
)
def test_exact_input_cross_chain_swap_reconciles(amount, slippage, app_fees) -> None:
    quote = fx.quote(fx.body(amount=str(amount), slippageTolerance=str(slippage), appFees=app_fees))
    split = quote.split
    assert quote.kind is RouteKind.CROSSCHAIN_SWAP
    assert split.amount_in == amount
    assert amount == split.relayer_gas + split.relayer_service + split.app_total + split.leg_input
    assert quote.leg.route is not None
    assert quote.amount_out == quote.leg.route.quote_out(split.leg_input)
    assert quote.minimum_out == quote.amount_out * (BPS - slippage) // BPS
    assert quote.swap_plan is not None and quote.swap_plan.minimum_out == quote.minimum_out
    [payment] = quote.order.output.payments
    assert (payment.expected_amount, payment.minimum_amount) == (
        quote.amount_out,
        quote.minimum_out,
    )
    _reconciles_in_usd(quote_wire(quote, allowance=None, user_balance=None))


@settings(max_examples=60, deadline=None)
@given(
    wanted=st.integers(min_value=10 * 10**6, max_value=100_000 * 10**6),
    slippage=st.integers(min_value=0, max_value=500),
    app_fees=app_fee_lists,
    trade_type=st.sampled_from(["EXACT_OUTPUT", "EXPECTED_OUTPUT"]),
)
def test_output_trade_types_deliver_the_requested_amount(
    wanted, slippage, app_fees, trade_type
) -> None:
    quote = fx.quote(
        fx.body(
            amount=str(wanted),
            tradeType=trade_type,
            slippageTolerance=str(slippage),
            appFees=app_fees,
        )
    )
    assert quote.amount_out >= wanted
    if trade_type == "EXACT_OUTPUT":
        assert quote.minimum_out == wanted
    else:
        assert quote.minimum_out == wanted * (BPS - slippage) // BPS
    # The leg input buys at least the minimum at the quoted reserves.
    assert quote.leg.route is not None
    assert quote.leg.route.quote_out(quote.split.leg_input) >= quote.minimum_out
    _reconciles_in_usd(quote_wire(quote, allowance=None, user_balance=None))


@pytest.mark.parametrize("trade_type", ["EXACT_INPUT", "EXACT_OUTPUT", "EXPECTED_OUTPUT"])
@pytest.mark.parametrize(
    ("currency_in", "currency_out", "kind", "operation"),
    [
        (NATIVE_EVM_ADDRESS, fx.USDC, RouteKind.SAME_CHAIN_SWAP, "swap"),
        (fx.USDC, NATIVE_EVM_ADDRESS, RouteKind.SAME_CHAIN_SWAP, "swap"),
        (NATIVE_EVM_ADDRESS, fx.WETH, RouteKind.WRAP, "wrap"),
        (fx.WETH, NATIVE_EVM_ADDRESS, RouteKind.UNWRAP, "unwrap"),
        (fx.USDC, fx.USDC, RouteKind.SEND, "send"),
    ],
)
def test_same_chain_routes_for_every_trade_type(
    currency_in, currency_out, kind, operation, trade_type
) -> None:
    sized_by = currency_in if trade_type == "EXACT_INPUT" else currency_out
    amount = 100 * 10**6 if sized_by == fx.USDC else 10**17
    quote = fx.quote(
        fx.body(
            destinationChainId=fx.CHAINS[0],
            originCurrency=currency_in,
            destinationCurrency=currency_out,
            amount=str(amount),
            tradeType=trade_type,
        )
    )
    wire = quote_wire(quote, allowance=None, user_balance=None)
    assert quote.kind is kind and wire["details"]["operation"] == operation
    assert quote.split.relayer_gas == 0
    if trade_type == "EXACT_INPUT":
        assert quote.split.amount_in == amount
    else:
        assert quote.amount_out >= amount
    main_step = wire["steps"][-1]
    assert main_step["id"] == ("send" if kind is RouteKind.SEND else "swap")
    # The batch's own gas limit, with room for a pool's first swap in a block.
    expected_gas = 100_000 + 150_000 * (kind is RouteKind.SAME_CHAIN_SWAP)
    assert int(main_step["items"][0]["data"]["gas"]) >= expected_gas
    approvals = [step for step in wire["steps"] if step["id"] == "approve"]
    assert bool(approvals) == (currency_in != NATIVE_EVM_ADDRESS)
    _reconciles_in_usd(wire)


def test_plain_bridge_exact_output_delivers_exactly_the_amount() -> None:
    quote = fx.quote(fx.body(destinationCurrency=NATIVE_EVM_ADDRESS, tradeType="EXACT_OUTPUT"))
    assert quote.kind is RouteKind.BRIDGE
    assert quote.amount_out == quote.minimum_out == fx.ETHER
    assert quote.split.leg_input == fx.ETHER
    wire = quote_wire(quote, allowance=None, user_balance=None)
    assert wire["details"]["swapImpact"] == {"usd": "0", "percent": "0"}
    _reconciles_in_usd(wire)


def test_service_fee_is_charged_by_pair_class_plus_flat() -> None:
    config = fx.deployment(service_fee_bps=10, swap_service_fee_bps=40, service_flat_fee_usd="3")
    bridge = fx.quote(fx.body(destinationCurrency=NATIVE_EVM_ADDRESS), config)
    swap = fx.quote(fx.body(), config)
    flat_in_wei = 10**18 // 1000  # $3 at $3000 per ETH
    assert bridge.split.relayer_service - flat_in_wei in range(
        10**18 * 10 // BPS, 10**18 * 10 // BPS + 2
    )
    assert swap.split.relayer_service - flat_in_wei in range(
        10**18 * 40 // BPS, 10**18 * 40 // BPS + 2
    )


def test_app_fees_are_split_per_recipient() -> None:
    first, second = "0x" + "a1" * 20, "0x" + "b2" * 20
    quote = fx.quote(
        fx.body(appFees=[{"recipient": first, "fee": "100"}, {"recipient": second, "fee": "50"}])
    )
    assert quote.split.app == (fx.ETHER // 100, fx.ETHER // 200)
    wire = quote_wire(quote, allowance=None, user_balance=None)
    assert wire["fees"]["app"]["amount"] == str(fx.ETHER * 150 // BPS)


def test_pool_price_follows_the_reserves() -> None:
    config = fx.deployment()
    chain_views = fx.views(config, usdc_reserve=2_000_000 * 10**6, weth_reserve=1_000 * fx.ETHER)
    quote = fx.quote(fx.body(destinationCurrency=NATIVE_EVM_ADDRESS), config, chain_views)
    wire = quote_wire(quote, allowance=None, user_balance=None)
    assert wire["details"]["currencyIn"]["amountUsd"] == "2000"


@pytest.mark.parametrize(
    ("fields", "error_code"),
    [
        ({"amount": str(2_000 * fx.ETHER)}, "SWAP_IMPACT_TOO_HIGH"),
        (
            {"includedSwapSources": ["uniswap-v2"], "excludedSwapSources": ["uniswap-v2"]},
            "NO_SWAP_ROUTES_FOUND",
        ),
        ({"includedDestinationSwapSources": []}, "NO_SWAP_ROUTES_FOUND"),
        ({"amount": "1"}, "AMOUNT_TOO_LOW"),
        ({"tradeType": "EXACT_OUTPUT", "amount": str(4_000_000 * 10**6)}, "INSUFFICIENT_LIQUIDITY"),
    ],
)
def test_unservable_swaps_fail_with_their_code(fields, error_code) -> None:
    with pytest.raises(QuoteError) as raised:
        fx.quote(fx.body(**fields))
    assert raised.value.error_code == error_code


def test_txs_after_a_swap_are_not_supported() -> None:
    call = {"to": fx.CONTRACT, "value": "0", "data": "0x"}
    with pytest.raises(QuoteError) as raised:
        fx.quote(fx.body(txs=[call]))
    assert raised.value.error_code == "EXTRA_TXS_NOT_SUPPORTED"


def test_txs_gas_is_charged_as_relayer_gas() -> None:
    bridge = {"destinationCurrency": NATIVE_EVM_ADDRESS}
    plain = fx.quote(fx.body(**bridge))
    call = {"to": fx.CONTRACT, "value": str(10**16), "data": "0x"}
    with_call = fx.quote(fx.body(**bridge, txs=[call], txsGasLimit=200_000))
    assert with_call.request_type == "Call" and with_call.calls_gas == 200_000
    fee_per_gas = 10**9 * 125 // 100 + 10**8  # base fee with its 25% buffer, plus priority
    assert with_call.split.relayer_gas - plain.split.relayer_gas == 200_000 * fee_per_gas


def test_override_price_impact_accepts_a_large_swap() -> None:
    quote = fx.quote(fx.body(amount=str(2_000 * fx.ETHER), overridePriceImpact=True))
    assert quote.amount_out > 0


def test_unknown_swap_source_is_a_bad_request() -> None:
    with pytest.raises(BadRequest) as raised:
        fx.quote(fx.body(includedSwapSources=["nowhere"]))
    assert "unknown swap source" in str(raised.value)


def test_missing_price_is_price_fetch_failed() -> None:
    config = fx.deployment()
    chain_views = fx.views(config)
    chain_views[fx.CHAINS[1]].state.market = type(chain_views[fx.CHAINS[1]].state.market)({}, {})
    document = config.model_dump()
    for chain in document["chains"]:
        chain["native_currency"]["usd_price"] = None
        for currency in chain["erc20_currencies"]:
            if currency["symbol"] == "WETH":
                currency["usd_price"] = None
    unpriced = type(config).model_validate(document)
    with pytest.raises(QuoteUnavailable) as raised:
        fx.quote(fx.body(), unpriced, fx.views(unpriced, weth_reserve=0))
    assert raised.value.error_code == "PRICE_FETCH_FAILED"


def test_a_swap_before_the_pools_are_read_is_unavailable_not_unroutable() -> None:
    config = fx.deployment()
    chain_views = fx.views(config)
    for view in chain_views.values():  # as right after a start, before the first market read
        view.state.market = MarketSnapshot(reserves={}, feed_rounds={})
    with pytest.raises(QuoteUnavailable) as raised:
        fx.quote(fx.body(), config, chain_views)
    assert raised.value.error_code == "SERVICE_UNAVAILABLE"
    assert "not known yet" in str(raised.value)
