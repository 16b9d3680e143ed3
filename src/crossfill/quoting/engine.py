"""Plan a quote from the request body and a snapshot of chain state. No I/O here.

Every route is fees first, then one leg: the input pays relayer gas, the service fee and the app
fees in its own currency, and what remains (the leg input) is bridged as is, swapped on the
destination by the solver, or, on one chain, swapped/wrapped/sent by the user's own transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from crossfill.config import Deployment
from crossfill.contracts.router_calls import SwapPlan
from crossfill.domain.gas import with_gas_headroom
from crossfill.domain.money import format_units
from crossfill.domain.order import Order
from crossfill.kinds.evm.config import ChainConfig, CurrencyConfig
from crossfill.quoting import inputs
from crossfill.quoting.amm import NoRoute, Route, best_route_for_input, best_route_for_output
from crossfill.quoting.checked import CheckedRequest, check_request
from crossfill.quoting.deposit_address import (
    DepositAddressRequest,
    DepositAddressTerms,
    deposit_address_request,
    sweep_gas,
    terms_for,
)
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
from crossfill.quoting.legs import Leg, RouteKind, pools_of, same_asset, swap_routes, unread_pools
from crossfill.quoting.money import (
    MICROS_PER_USD,
    ceil_div,
    convert_ceil,
    from_usd_micros_ceil,
    to_usd_micros,
    unit,
)
from crossfill.quoting.orders import build_order
from crossfill.quoting.prices import PriceBook
from crossfill.quoting.pricing import QuotePrices, fee_per_gas
from crossfill.quoting.request import QuoteRequest
from crossfill.quoting.sponsorship import NONE as NOT_SPONSORED
from crossfill.quoting.sponsorship import Sponsorship, SponsorWallet, apply, sponsor

FILL_WINDOW = timedelta(hours=1)
# A gas top-up is one more native payment in the fill: a value transfer, to a new account at
# worst (9,000 for the value, 25,000 for the account).
TOPUP_PAYMENT_GAS = 34_000
# A deposit by authorization costs an ERC-20 deposit and the token's signature check.
AUTHORIZATION_GAS = 30_000
__all__ = ["FILL_WINDOW", "ChainView", "Entropy", "Quote", "fill_deadline", "plan_quote"]


def fill_deadline(expires_at: datetime) -> int:
    """The order's deadline (Unix seconds): the quote's expiry plus the fill window."""
    return int((expires_at + FILL_WINDOW).timestamp())


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
    sponsorship: Sponsorship
    # Who pays the sponsored fees, and how much in its own currency (0 when nothing is).
    sponsor: SponsorWallet | None
    sponsor_payment: int
    # Destination gas currency the fill delivers to the recipient (`topupGas`), in wei; its
    # cost is in `split.relayer_gas`.
    gas_topup: int
    # `usePermit`: the deposit authorization's `validBefore` (Unix seconds); the solver sends
    # the deposit, its origin gas is in `split.relayer_gas`. None for a deposit transaction.
    permit_valid_before: int | None
    # `enableTrueExactOutput`: the fill pays `amount_out` exactly, the swap's surplus to the
    # solver.
    true_exact_output: bool
    # `fixedRate`: the bps charged as the whole service fee, gas included; None when floating.
    fixed_rate_bps: int | None
    # `useDepositAddress`: the address the user pays by a plain transfer; None otherwise.
    deposit_address: DepositAddressTerms | None
    deposit_gas_wei: int
    slippage_bps: int
    explicit_deposit: bool
    # `protocolVersion: "v1"`: the deposit is ether sent to the solver through the Receiver.
    paid_to_solver: bool
    referrer: str | None
    created_at: datetime
    expires_at: datetime
    # (chain id, lower-case currency address) -> micro-USD per whole unit, as quoted.
    prices: Mapping[tuple[int, str], int]

    def price_micros(self, chain: ChainConfig, currency: CurrencyConfig) -> int:
        """A whole unit of `currency` on `chain` in micro-USD, as quoted."""
        return self.prices[(chain.id, currency.address.lower())]

    def usd_micros(self, chain: ChainConfig, currency: CurrencyConfig, amount: int) -> int:
        return to_usd_micros(amount, currency.decimals, self.price_micros(chain, currency))

    @property
    def request_type(self) -> str:
        return "Call" if self.calls else self.kind.request_type

    def in_usd(self, amount: int) -> int:
        return self.usd_micros(self.origin, self.currency_in, amount)

    def out_usd(self, amount: int) -> int:
        return self.usd_micros(self.destination, self.currency_out, amount)


def _fill_gas(request: CheckedRequest) -> int:
    """The gas a cross-chain fill is budgeted on the destination."""
    fees = request.destination.config.fees
    if request.kind is RouteKind.CROSSCHAIN_SWAP:
        gas = fees.fill_swap_gas
    else:
        gas = fees.fill_gas_native if request.currency_out.is_native else fees.fill_gas_erc20
    gas += request.calls_gas
    if request.topup_usd_micros:
        gas += TOPUP_PAYMENT_GAS
    return gas


def _relayer_gas(request: CheckedRequest, prices: QuotePrices) -> int:
    """The fill's gas on the destination, priced in the input currency (0 on one chain)."""
    if request.kind.same_chain:
        return 0
    return _gas_in_input(request, prices, request.destination, _fill_gas(request))


def _gas_in_input(request: CheckedRequest, prices: QuotePrices, chain: ChainView, gas: int) -> int:
    """`gas` on `chain` at its fee per gas, priced in the input currency (rounded up)."""
    native = chain.config.native_currency
    return convert_ceil(
        gas * fee_per_gas(chain),
        from_decimals=native.decimals,
        from_price=prices(chain.config, native),
        to_decimals=request.currency_in.decimals,
        to_price=prices(request.origin.config, request.currency_in),
    )


@dataclass(frozen=True)
class _GasTopup:
    wei: int  # delivered on the destination
    cost: int  # charged, in input units (rounded up)


def _gas_topup(request: CheckedRequest, prices: QuotePrices) -> _GasTopup:
    """`topupGas`: its USD value in the destination's gas currency, and what the user pays."""
    if request.topup_usd_micros == 0:
        return _GasTopup(0, 0)
    destination = request.destination.config
    native = destination.native_currency
    native_price = prices(destination, native)
    wei = request.topup_usd_micros * unit(native.decimals) // native_price
    cost = convert_ceil(
        wei,
        from_decimals=native.decimals,
        from_price=native_price,
        to_decimals=request.currency_in.decimals,
        to_price=prices(request.origin.config, request.currency_in),
    )
    return _GasTopup(wei, cost)


def _permit_gas(request: CheckedRequest, prices: QuotePrices) -> int:
    """`usePermit`: the origin deposit the solver sends for the user, in input units."""
    if request.permit is None:
        return 0
    origin = request.origin
    gas = origin.config.fees.deposit_gas_erc20 + AUTHORIZATION_GAS
    gas += request.permit.origin_gas_overhead
    return _gas_in_input(request, prices, origin, gas)


def _sweep_gas(
    request: CheckedRequest, prices: QuotePrices, wanted: DepositAddressRequest | None
) -> int:
    """`useDepositAddress`: the sweep the solver sends on the origin, in input units."""
    if wanted is None:
        return 0
    gas = sweep_gas(request.origin.config.fees, native=request.currency_in.is_native)
    return _gas_in_input(request, prices, request.origin, gas)


def _permit_valid_before(request: CheckedRequest, now: datetime, expires_at: datetime) -> int:
    assert request.permit is not None
    valid_until = min(now + timedelta(seconds=request.permit.expiry_seconds), expires_at)
    return int(valid_until.timestamp())


def _rates(request: CheckedRequest, prices: QuotePrices) -> FeeRates:
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


def _fixed_rates(request: CheckedRequest, rates: FeeRates, floating: Split) -> FeeRates:
    """`fixedRate`: its bps as the whole service fee, gas included. It may not undercut what
    the same request costs at the service's own rates."""
    assert request.fixed_rate_bps is not None
    least_bps = ceil_div(floating.relayer * BPS, floating.amount_in)
    if request.fixed_rate_bps < least_bps:
        raise QuoteError(
            "AMOUNT_TOO_LOW",
            f"fixedRate {request.fixed_rate_bps} bps does not cover this request's gas and "
            f"service fee: ask for at least {least_bps} bps, or a larger amount",
        )
    try:
        return FeeRates(
            service_bps=request.fixed_rate_bps, app_bps=rates.app_bps, gas_included=True
        )
    except AmountTooLow as exc:
        raise QuoteError("AMOUNT_TOO_LOW", f"fixedRate with appFees: {exc}") from None


def _leg(request: CheckedRequest, body: QuoteRequest) -> tuple[Leg, list[Route]]:
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
    if not routes and unread_pools(view.config, view.state, sources):
        # Not "no route": a route may run through a pool whose reserves we have not read yet
        # (the chain's first poll after a start, or a failed read).
        raise QuoteUnavailable(
            "SERVICE_UNAVAILABLE", f"pool reserves on chain {view.config.id} not known yet"
        )
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
    sponsorship: Sponsorship


def _sponsored(
    request: CheckedRequest, split: Split, prices: QuotePrices
) -> tuple[Split, Sponsorship]:
    if request.sponsoring is None:
        return split, NOT_SPONSORED
    cap = None
    if request.sponsoring.cap_usd_micros is not None:
        price = prices(request.origin.config, request.currency_in)
        cap = request.sponsoring.cap_usd_micros * unit(request.currency_in.decimals) // price
    sponsorship = replace(
        sponsor(split, request.sponsoring.components, cap),
        cap_usd_micros=request.sponsoring.cap_usd_micros,
    )
    return apply(split, sponsorship.sponsored, request.trade_type), sponsorship


def _amounts(
    request: CheckedRequest,
    leg: Leg,
    routes: list[Route],
    gas: int,
    rates: FeeRates,
    prices: QuotePrices,
) -> _Amounts:
    swap = bool(routes)
    slippage = request.slippage_bps
    try:
        if request.trade_type is TradeType.EXACT_INPUT:
            split, sponsorship = _sponsored(
                request, split_input(request.amount, gas=gas, rates=rates), prices
            )
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
            split, sponsorship = _sponsored(
                request, split_for_leg_input(target, gas=gas, rates=rates), prices
            )
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
    if split.amount_in <= 0:
        raise QuoteError("AMOUNT_TOO_LOW", "amount too low: the sponsor would pay it all")
    return _Amounts(
        split=split,
        leg=leg,
        amount_out=expected,
        minimum_out=minimum,
        sponsorship=sponsorship,
    )


def _sponsor_payment(
    request: CheckedRequest, amounts: _Amounts, prices: QuotePrices, chains: Mapping[int, ChainView]
) -> int:
    """What the sponsor wallet pays, in its own currency: the sponsored value, rounded up."""
    if request.sponsoring is None or amounts.sponsorship.sponsored == 0:
        return 0
    wallet = request.sponsoring.wallet
    found = chains.get(wallet.chain_id)
    view = found.config if found else None
    currency = view.currency(wallet.currency) if view else None
    if view is None or currency is None:
        raise QuoteUnavailable(
            "SERVICE_UNAVAILABLE", "the sponsor wallet's chain or currency is not configured"
        )
    value = to_usd_micros(
        amounts.sponsorship.sponsored,
        request.currency_in.decimals,
        prices(request.origin.config, request.currency_in),
    )
    return from_usd_micros_ceil(value, currency.decimals, prices(view, currency))


def _check_impact(
    request: CheckedRequest,
    amounts: _Amounts,
    prices: QuotePrices,
    body: QuoteRequest,
    limit_bps: int,
) -> None:
    if not amounts.leg.is_swap or body.override_price_impact:
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


def _check_liquidity(request: CheckedRequest, amounts: _Amounts, gas_topup: int) -> None:
    """The solver pays the leg's input (and a gas top-up) on the destination from its free
    inventory (its balance less the outputs of orders in flight, `domain.inventory`), and the
    fill's gas: its budget, with the head-room a fill is sent with, at the highest fee it
    offers (what a node checks the balance against). Refused with what could be served."""
    if request.kind.same_chain:
        return
    destination = request.destination
    paid = amounts.leg.currency_in.address.lower()
    needed = {paid: amounts.split.leg_input}
    native = destination.config.native_currency.address.lower()
    max_fee, _tip = destination.state.offered_fees()
    gas_cost = with_gas_headroom(_fill_gas(request)) * max_fee
    needed[native] = needed.get(native, 0) + gas_topup + gas_cost
    for address, amount in needed.items():
        currency = destination.config.currency(address)
        assert currency is not None
        free = destination.state.solver_free(currency.address)
        if free is None:
            raise QuoteUnavailable(
                "SERVICE_UNAVAILABLE",
                f"solver inventory on chain {destination.config.id} not known yet",
            )
        if free < amount:
            # The largest output that fits: the free inventory of its currency less what
            # else the fill takes of it (none when the gas currency is short of the gas).
            paid_currency = destination.config.currency(paid)
            assert paid_currency is not None
            servable = max(0, free - (amount - amounts.split.leg_input)) if address == paid else 0
            raise QuoteError(
                "INSUFFICIENT_LIQUIDITY",
                f"the solver's free inventory on chain {destination.config.id} cannot cover "
                f"this order: at most {format_units(servable, paid_currency.decimals)} "
                f"{paid_currency.symbol} ({servable} in smallest units) can be served now",
            )


def _deposit_gas(request: CheckedRequest) -> int:
    fees = request.origin.config.fees
    if request.kind.same_chain:
        return fees.fill_swap_gas if request.kind is RouteKind.SAME_CHAIN_SWAP else 80_000
    return fees.deposit_gas_native if request.currency_in.is_native else fees.deposit_gas_erc20


def plan_quote(
    body: QuoteRequest,
    *,
    chains: Mapping[int, ChainView],
    deployment: Deployment,
    now: datetime,
    entropy: Entropy,
    sponsor_wallet: SponsorWallet | None = None,
) -> Quote:
    request = check_request(body, chains, sponsor_wallet)
    wanted_address = deposit_address_request(
        body, request.origin.config, same_chain=request.kind.same_chain
    )
    user = inputs.address(body.user, "INVALID_ADDRESS", "user")
    recipient = inputs.address(body.recipient or body.user, "INVALID_RECIPIENT", "recipient")
    refund_to = inputs.address(body.refund_to or body.user, "INVALID_ADDRESS", "refundTo")
    expires_at = now + inputs.ttl(body.ttl, deployment.quotes)
    prices = QuotePrices(
        PriceBook(
            {chain_id: (view.config, view.state) for chain_id, view in chains.items()},
            now_seconds=int(now.timestamp()),
        )
    )
    prices(request.origin.config, request.currency_in)
    prices(request.destination.config, request.currency_out)
    prices(request.origin.config, request.origin.config.native_currency)
    leg, routes = _leg(request, body)
    topup = _gas_topup(request, prices)
    gas = _relayer_gas(request, prices) + topup.cost + _permit_gas(request, prices)
    gas += _sweep_gas(request, prices, wanted_address)
    rates = _rates(request, prices)
    amounts = _amounts(request, leg, routes, gas, rates, prices)
    if request.fixed_rate_bps is not None:
        fixed = _fixed_rates(request, rates, amounts.split)
        amounts = _amounts(request, leg, routes, gas, fixed, prices)
    _check_impact(request, amounts, prices, body, deployment.quotes.max_swap_impact_bps)
    _check_liquidity(request, amounts, topup.wei)
    if request.true_exact_output:
        # The recipient gets the amount asked, no more: the swap's surplus is the solver's.
        amounts = replace(amounts, amount_out=amounts.minimum_out)
    if amounts.leg.is_swap:
        prices(amounts.leg.chain, amounts.leg.currency_in)
    swap_plan = (
        amounts.leg.swap_plan(amounts.split.leg_input, amounts.minimum_out)
        if amounts.leg.is_swap
        else None
    )
    deadline = fill_deadline(expires_at)
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
        gas_topup=topup.wei,
    )
    order_id = "0x" + order.order_id().hex()
    return Quote(
        request_id="0x" + entropy.request_id.hex(),
        order=order,
        order_id=order_id,
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
        sponsorship=amounts.sponsorship,
        sponsor=request.sponsoring.wallet if request.sponsoring else None,
        sponsor_payment=_sponsor_payment(request, amounts, prices, chains),
        gas_topup=topup.wei,
        fixed_rate_bps=request.fixed_rate_bps,
        deposit_address=(
            None
            if wanted_address is None
            else terms_for(wanted_address, request.origin.config, order_id)
        ),
        true_exact_output=request.true_exact_output,
        permit_valid_before=(
            None if request.permit is None else _permit_valid_before(request, now, expires_at)
        ),
        # The user's own gas: none when the solver sends the deposit.
        deposit_gas_wei=0
        if request.permit
        else _deposit_gas(request) * fee_per_gas(request.origin),
        slippage_bps=request.slippage_bps,
        explicit_deposit=body.explicit_deposit,
        paid_to_solver=request.paid_to_solver,
        referrer=request.referrer,
        created_at=now,
        expires_at=expires_at,
        prices=dict(prices.seen),
    )
