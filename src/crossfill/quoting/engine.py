"""Plan a quote from the request body and a snapshot of chain state. No I/O here.

Every route is fees first, then one leg: the input pays relayer gas, the service fee and the app
fees in its own currency, and what remains (the leg input) is bridged as is, swapped on the
destination by the solver, or, on one chain, swapped/wrapped/sent by the user's own transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from crossfill.api.schemas.quote import QuoteBody
from crossfill.config import ChainConfig, CurrencyConfig, Deployment
from crossfill.contracts.router_calls import SwapPlan
from crossfill.domain.order import InputRefund, Order, OrderInput, OrderOutput, OutputPayment
from crossfill.quoting import inputs
from crossfill.quoting.amm import NoRoute, Route, best_route_for_input, best_route_for_output
from crossfill.quoting.errors import QuoteError, QuoteUnavailable
from crossfill.quoting.fees import (
    BPS,
    AmountTooLow,
    FeeRates,
    Split,
    TradeType,
    minimum_after_slippage,
    split_for_leg_input,
    split_input,
    with_slippage_headroom,
)
from crossfill.quoting.inputs import AppFeeShare, ChainView, ExtraCall
from crossfill.quoting.legs import Leg, RouteKind, pools_of, route_kind, same_asset, swap_routes
from crossfill.quoting.money import (
    MICROS_PER_USD,
    convert_ceil,
    from_usd_micros_ceil,
    to_usd_micros,
)
from crossfill.quoting.prices import PriceBook, PriceMissing
from crossfill.quoting.unsupported import reject_unsupported

FILL_WINDOW = timedelta(hours=1)
__all__ = ["FILL_WINDOW", "ChainView", "Entropy", "Quote", "plan_quote"]


@dataclass(frozen=True)
class Entropy:
    request_id: bytes
    salt: int


@dataclass(frozen=True)
class Quote:
    request_id: str
    order: Order
    order_id: str
    kind: RouteKind
    origin: ChainConfig
    destination: ChainConfig
    currency_in: CurrencyConfig
    currency_out: CurrencyConfig
    user: str
    recipient: str
    refund_to: str
    trade_type: TradeType
    split: Split
    leg: Leg
    amount_out: int
    minimum_out: int
    swap_plan: SwapPlan | None
    app_fees: tuple[AppFeeShare, ...]
    # Destination calls (`txs`) and the gas budgeted for them.
    calls: tuple[ExtraCall, ...]
    calls_gas: int
    deposit_gas_wei: int
    slippage_bps: int
    explicit_deposit: bool
    created_at: datetime
    expires_at: datetime
    # (chain id, lower-case currency address) -> micro-USD per whole unit, as quoted.
    prices: Mapping[tuple[int, str], int]

    def usd_micros(self, chain: ChainConfig, currency: CurrencyConfig, amount: int) -> int:
        price = self.prices[(chain.id, currency.address.lower())]
        return to_usd_micros(amount, currency.decimals, price)

    @property
    def request_type(self) -> str:
        return "Call" if self.calls else self.kind.request_type

    def in_usd(self, amount: int) -> int:
        return self.usd_micros(self.origin, self.currency_in, amount)

    def out_usd(self, amount: int) -> int:
        return self.usd_micros(self.destination, self.currency_out, amount)

    @property
    def deadline(self) -> int:
        return int((self.expires_at + FILL_WINDOW).timestamp())


class _Prices:
    """Prices looked up while planning, remembered for the quote's USD figures."""

    def __init__(self, book: PriceBook) -> None:
        self.book = book
        self.seen: dict[tuple[int, str], int] = {}

    def __call__(self, chain: ChainConfig, currency: CurrencyConfig) -> int:
        key = (chain.id, currency.address.lower())
        if key not in self.seen:
            try:
                self.seen[key] = self.book.price(chain.id, currency)
            except PriceMissing as exc:
                raise QuoteUnavailable("PRICE_FETCH_FAILED", str(exc)) from None
        return self.seen[key]


def _fee_per_gas(view: ChainView) -> int:
    fee = view.state.fee_per_gas(view.config.fees.base_fee_buffer_percent)
    if fee is None:
        raise QuoteUnavailable(
            "SERVICE_UNAVAILABLE", f"no fresh gas price for chain {view.config.id} yet"
        )
    return fee


@dataclass(frozen=True)
class _Request:
    """The body's checked fields."""

    kind: RouteKind
    origin: ChainView
    destination: ChainView
    currency_in: CurrencyConfig
    currency_out: CurrencyConfig
    trade_type: TradeType
    amount: int
    slippage_bps: int
    app_fees: tuple[AppFeeShare, ...]
    calls: tuple[ExtraCall, ...]
    calls_gas: int


def _checked_calls(
    body: QuoteBody, kind: RouteKind, destination: ChainView, currency_out: CurrencyConfig
) -> tuple[tuple[ExtraCall, ...], int]:
    calls = inputs.extra_calls(body.txs)
    if not calls:
        return (), 0
    if kind is not RouteKind.BRIDGE:
        raise QuoteError(
            "EXTRA_TXS_NOT_SUPPORTED",
            "txs run on the destination after a bridge of the same asset; "
            "not after a swap, nor on one chain",
        )
    if not currency_out.is_native and any(call.value for call in calls):
        raise QuoteError(
            "INVALID_EXTRA_TXS", "txs may carry value only when the destination currency is native"
        )
    default_gas = destination.config.fees.call_gas_default
    return calls, inputs.txs_gas_limit(body.txsGasLimit, default_gas)


def _checked(body: QuoteBody, chains: Mapping[int, ChainView]) -> _Request:
    reject_unsupported(body)
    origin = inputs.chain(chains, body.originChainId, "originChainId")
    destination = inputs.chain(chains, body.destinationChainId, "destinationChainId")
    currency_in = inputs.currency(
        origin, body.originCurrency, "INVALID_INPUT_CURRENCY", "originCurrency"
    )
    currency_out = inputs.currency(
        destination, body.destinationCurrency, "INVALID_OUTPUT_CURRENCY", "destinationCurrency"
    )
    kind = route_kind(origin.config, destination.config, currency_in, currency_out)
    calls, calls_gas = _checked_calls(body, kind, destination, currency_out)
    return _Request(
        kind=kind,
        origin=origin,
        destination=destination,
        currency_in=currency_in,
        currency_out=currency_out,
        trade_type=inputs.trade_type(body.tradeType),
        amount=inputs.amount(body.amount),
        slippage_bps=inputs.slippage_bps(body.slippageTolerance),
        app_fees=inputs.app_fees(body.appFees),
        calls=calls,
        calls_gas=calls_gas,
    )


def _relayer_gas(request: _Request, prices: _Prices) -> int:
    """The fill's gas on the destination, priced in the input currency (0 on one chain)."""
    if request.kind.same_chain:
        return 0
    destination = request.destination
    fees = destination.config.fees
    if request.kind is RouteKind.CROSSCHAIN_SWAP:
        gas = fees.fill_swap_gas
    else:
        gas = fees.fill_gas_native if request.currency_out.is_native else fees.fill_gas_erc20
    gas += request.calls_gas
    native = destination.config.native_currency
    return convert_ceil(
        gas * _fee_per_gas(destination),
        from_decimals=native.decimals,
        from_price=prices(destination.config, native),
        to_decimals=request.currency_in.decimals,
        to_price=prices(request.origin.config, request.currency_in),
    )


def _rates(request: _Request, prices: _Prices) -> FeeRates:
    fees = request.destination.config.fees
    app_bps = tuple(share.bps for share in request.app_fees)
    match request.kind:
        case RouteKind.BRIDGE:
            service_bps = fees.service_fee_bps
        case RouteKind.CROSSCHAIN_SWAP:
            service_bps = fees.swap_service_fee_bps
        case RouteKind.SAME_CHAIN_SWAP:
            service_bps = fees.same_chain_service_fee_bps
        case _:
            service_bps = 0
    flat = 0
    if not request.kind.same_chain and fees.service_flat_fee_usd > 0:
        flat = from_usd_micros_ceil(
            int(fees.service_flat_fee_usd * MICROS_PER_USD),
            request.currency_in.decimals,
            prices(request.origin.config, request.currency_in),
        )
    try:
        return FeeRates(service_bps=service_bps, flat=flat, app_bps=app_bps)
    except AmountTooLow as exc:
        raise QuoteError("AMOUNT_TOO_LOW", str(exc)) from None


def _leg(request: _Request, body: QuoteBody) -> tuple[Leg, list[Route]]:
    """The leg and, for swaps, its candidate routes."""
    if request.kind is RouteKind.BRIDGE:
        return Leg(request.destination.config, request.currency_out, request.currency_out), []
    if request.kind in (RouteKind.WRAP, RouteKind.UNWRAP, RouteKind.SEND):
        return Leg(request.origin.config, request.currency_in, request.currency_out), []
    if request.kind is RouteKind.SAME_CHAIN_SWAP:
        view, leg_in = request.origin, request.currency_in
    else:
        view = request.destination
        found = next(
            (c for c in view.config.currencies if same_asset(c, request.currency_in)), None
        )
        if found is None:
            raise QuoteError(
                "NO_SWAP_ROUTES_FOUND",
                f"{request.currency_in.symbol} cannot be bridged to chain {view.config.id} "
                "(origin swaps are not offered)",
            )
        leg_in = found
    sources = inputs.swap_sources(body, origin=request.kind is RouteKind.SAME_CHAIN_SWAP)
    pools = pools_of(view.config, view.state, sources)
    routes = swap_routes(view.config, pools, leg_in, request.currency_out)
    if not routes:
        raise QuoteError(
            "NO_SWAP_ROUTES_FOUND",
            f"no pool route from {leg_in.symbol} to {request.currency_out.symbol} "
            f"on chain {view.config.id}",
        )
    return Leg(view.config, leg_in, request.currency_out), list(routes)


@dataclass(frozen=True)
class _Amounts:
    split: Split
    leg: Leg
    amount_out: int
    minimum_out: int


def _amounts(
    request: _Request, leg: Leg, routes: list[Route], gas: int, rates: FeeRates
) -> _Amounts:
    swap = bool(routes)
    slippage = request.slippage_bps
    try:
        if request.trade_type is TradeType.EXACT_INPUT:
            split = split_input(request.amount, gas=gas, rates=rates)
            if swap:
                route, _ = best_route_for_input(routes, split.leg_input)
                leg = Leg(leg.chain, leg.currency_in, leg.currency_out, route)
            expected = leg.out(split.leg_input)
            minimum = minimum_after_slippage(expected, slippage) if swap else expected
        else:
            target = request.amount
            if swap:
                route, needed = best_route_for_output(routes, request.amount)
                leg = Leg(leg.chain, leg.currency_in, leg.currency_out, route)
                exact = request.trade_type is TradeType.EXACT_OUTPUT
                target = with_slippage_headroom(needed, slippage) if exact else needed
            split = split_for_leg_input(target, gas=gas, rates=rates)
            expected = leg.out(split.leg_input)
            if swap and request.trade_type is TradeType.EXPECTED_OUTPUT:
                minimum = minimum_after_slippage(request.amount, slippage)
            else:
                minimum = request.amount
    except AmountTooLow as exc:
        raise QuoteError("AMOUNT_TOO_LOW", f"amount too low: {exc}") from None
    except NoRoute as exc:
        raise QuoteError("INSUFFICIENT_LIQUIDITY", f"swap route: {exc}") from None
    if expected <= 0 or minimum <= 0:
        raise QuoteError("AMOUNT_TOO_LOW", "amount too low: the swap would return nothing")
    call_value = sum(call.value for call in request.calls)
    if minimum < call_value:
        raise QuoteError(
            "AMOUNT_TOO_LOW",
            f"the bridged amount {minimum} does not cover the txs' value {call_value}",
        )
    return _Amounts(split=split, leg=leg, amount_out=expected, minimum_out=minimum)


def _check_impact(
    request: _Request, amounts: _Amounts, prices: _Prices, body: QuoteBody, limit_bps: int
) -> None:
    if not amounts.leg.is_swap or body.overridePriceImpact:
        return
    leg = amounts.leg
    value_in = to_usd_micros(
        amounts.split.leg_input, leg.currency_in.decimals, prices(leg.chain, leg.currency_in)
    )
    value_out = to_usd_micros(
        amounts.amount_out, leg.currency_out.decimals, prices(leg.chain, leg.currency_out)
    )
    if value_in > 0 and (value_in - value_out) * BPS > value_in * limit_bps:
        raise QuoteError(
            "SWAP_IMPACT_TOO_HIGH",
            f"the swap loses more than {limit_bps / 100:.2f}% of its value "
            "(set overridePriceImpact to accept)",
        )


def _check_liquidity(request: _Request, amounts: _Amounts) -> None:
    """The solver pays the leg's input on the destination from its own inventory."""
    if request.kind.same_chain:
        return
    destination = request.destination
    currency = amounts.leg.currency_in
    needed = amounts.split.leg_input
    balance = destination.state.solver_balance(currency.address)
    if balance is None:
        raise QuoteUnavailable(
            "SERVICE_UNAVAILABLE",
            f"solver inventory on chain {destination.config.id} not known yet",
        )
    if balance < needed:
        raise QuoteError(
            "INSUFFICIENT_LIQUIDITY",
            f"the solver holds too little {currency.symbol} on chain {destination.config.id}",
        )


def _deposit_gas(request: _Request) -> int:
    fees = request.origin.config.fees
    if request.kind.same_chain:
        return fees.fill_swap_gas if request.kind is RouteKind.SAME_CHAIN_SWAP else 80_000
    return fees.deposit_gas_native if request.currency_in.is_native else fees.deposit_gas_erc20


def plan_quote(
    body: QuoteBody,
    *,
    chains: Mapping[int, ChainView],
    deployment: Deployment,
    now: datetime,
    entropy: Entropy,
) -> Quote:
    request = _checked(body, chains)
    user = inputs.address(body.user, "INVALID_ADDRESS", "user")
    recipient = inputs.address(body.recipient or body.user, "INVALID_RECIPIENT", "recipient")
    refund_to = inputs.address(body.refundTo or body.user, "INVALID_ADDRESS", "refundTo")
    expires_at = now + inputs.ttl(body.ttl, deployment.quotes)
    prices = _Prices(
        PriceBook(
            {chain_id: (view.config, view.state) for chain_id, view in chains.items()},
            now_seconds=int(now.timestamp()),
        )
    )
    prices(request.origin.config, request.currency_in)
    prices(request.destination.config, request.currency_out)
    prices(request.origin.config, request.origin.config.native_currency)
    leg, routes = _leg(request, body)
    amounts = _amounts(request, leg, routes, _relayer_gas(request, prices), _rates(request, prices))
    _check_impact(request, amounts, prices, body, deployment.quotes.max_swap_impact_bps)
    _check_liquidity(request, amounts)
    if amounts.leg.is_swap:
        prices(amounts.leg.chain, amounts.leg.currency_in)
    swap_plan = (
        amounts.leg.swap_plan(amounts.split.leg_input, amounts.minimum_out)
        if amounts.leg.is_swap
        else None
    )
    deadline = int((expires_at + FILL_WINDOW).timestamp())
    order = build_order(
        origin=request.origin.config,
        destination=request.destination.config,
        solver=deployment.solver.address,
        salt=entropy.salt,
        currency_in=request.currency_in,
        currency_out=request.currency_out,
        amount_in=amounts.split.amount_in,
        amount_out=amounts.amount_out,
        minimum_out=amounts.minimum_out,
        recipient=recipient,
        refund_to=refund_to,
        deadline=deadline,
    )
    return Quote(
        request_id="0x" + entropy.request_id.hex(),
        order=order,
        order_id="0x" + order.order_id().hex(),
        kind=request.kind,
        origin=request.origin.config,
        destination=request.destination.config,
        currency_in=request.currency_in,
        currency_out=request.currency_out,
        user=user,
        recipient=recipient,
        refund_to=refund_to,
        trade_type=request.trade_type,
        split=amounts.split,
        leg=amounts.leg,
        amount_out=amounts.amount_out,
        minimum_out=amounts.minimum_out,
        swap_plan=swap_plan,
        app_fees=request.app_fees,
        calls=request.calls,
        calls_gas=request.calls_gas,
        deposit_gas_wei=_deposit_gas(request) * _fee_per_gas(request.origin),
        slippage_bps=request.slippage_bps,
        explicit_deposit=body.explicitDeposit,
        created_at=now,
        expires_at=expires_at,
        prices=dict(prices.seen),
    )


def build_order(
    *,
    origin: ChainConfig,
    destination: ChainConfig,
    solver: str,
    salt: int,
    currency_in: CurrencyConfig,
    currency_out: CurrencyConfig,
    amount_in: int,
    amount_out: int,
    minimum_out: int,
    recipient: str,
    refund_to: str,
    deadline: int,
) -> Order:
    def raw(address: str) -> bytes:
        return bytes.fromhex(address[2:])

    refund = InputRefund(
        chain_id=origin.protocol_name,
        recipient=raw(refund_to),
        currency=raw(currency_in.address),
        minimum_amount=0,
        deadline=deadline,
    )
    payment = OutputPayment(
        recipient=raw(recipient),
        currency=raw(currency_out.address),
        minimum_amount=minimum_out,
        expected_amount=amount_out,
    )
    return Order(
        solver_chain_id=destination.protocol_name,
        solver=solver,
        salt=salt,
        inputs=(
            OrderInput(
                chain_id=origin.protocol_name,
                currency=raw(currency_in.address),
                amount=amount_in,
                refunds=(refund,),
            ),
        ),
        output=OrderOutput(
            chain_id=destination.protocol_name, payments=(payment,), deadline=deadline
        ),
    )
