"""The quote's wire shape (spec "Quote response"): fees, sponsorship, details, protocol.

USD figures reconcile exactly: each fee's USD value is rounded down on its own, the leg input's
value is what remains of the input's, and so `totalImpact = swapImpact - fees` to the micro-USD.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from crossfill.kinds.evm.config import ChainConfig, CurrencyConfig
from crossfill.quoting.engine import Quote
from crossfill.quoting.legs import RouteKind
from crossfill.quoting.money import format_rate, format_units, format_usd, to_usd_micros
from crossfill.quoting.sponsorship import Sponsorship
from crossfill.quoting.steps import deposit_target, steps

SERVICE_ROUTER = "crossfill"


def currency_wire(chain: ChainConfig, currency: CurrencyConfig) -> dict[str, Any]:
    return {
        "chainId": chain.id,
        "address": currency.address.lower(),
        "symbol": currency.symbol,
        "name": currency.name,
        "decimals": currency.decimals,
        "metadata": {
            "logoURI": currency.logo_uri,
            "verified": currency.verified,
            "isNative": currency.is_native,
        },
    }


def amount_wire(
    chain: ChainConfig,
    currency: CurrencyConfig,
    amount: int,
    usd_micros: int,
    minimum: int | None = None,
) -> dict[str, Any]:
    return _amount(currency_wire(chain, currency), currency.decimals, amount, usd_micros, minimum)


def _amount(
    currency: dict[str, Any], decimals: int, amount: int, usd_micros: int, minimum: int | None
) -> dict[str, Any]:
    return {
        "currency": currency,
        "amount": str(amount),
        "amountFormatted": format_units(amount, decimals),
        "amountUsd": format_usd(usd_micros),
        "minimumAmount": str(amount if minimum is None else minimum),
    }


class _AnswerAmounts:
    """The amounts of one quote's answer, each currency's wire object and each distinct input
    amount built once.

    An answer carries about thirty amounts in at most four currencies, most of them zero (the
    fees and sponsorship components a quote does not charge). Within the answer they are
    shared, as `refundCurrency` already is `currencyIn`: the answer is a tree that is encoded
    (or stored) once and never changed, so a shared node reads exactly as copies would. Nothing
    is kept across answers."""

    def __init__(self, quote: Quote) -> None:
        self._quote = quote
        # (chain id, currency address) -> (its wire object, its quoted price in micro-USD)
        self._currencies: dict[tuple[int, str], tuple[dict[str, Any], int]] = {}
        self._inputs: dict[int, dict[str, Any]] = {}

    def _currency(self, chain: ChainConfig, currency: CurrencyConfig) -> tuple[dict[str, Any], int]:
        key = (chain.id, currency.address)
        known = self._currencies.get(key)
        if known is None:
            price = self._quote.price_micros(chain, currency)
            known = self._currencies[key] = (currency_wire(chain, currency), price)
        return known

    def of(
        self,
        chain: ChainConfig,
        currency: CurrencyConfig,
        amount: int,
        minimum: int | None = None,
    ) -> dict[str, Any]:
        """`amount` of `currency` on `chain`, valued at the quote's price (rounded down)."""
        wired, price = self._currency(chain, currency)
        usd_micros = to_usd_micros(amount, currency.decimals, price)
        return _amount(wired, currency.decimals, amount, usd_micros, minimum)

    def of_input(self, amount: int) -> dict[str, Any]:
        """`amount` of the input currency (the fees, the sponsorship's components)."""
        wired = self._inputs.get(amount)
        if wired is None:
            quote = self._quote
            wired = self._inputs[amount] = self.of(quote.origin, quote.currency_in, amount)
        return wired


def _percent(part_micros: int, whole_micros: int) -> str:
    """A signed percentage with two decimals, from integer micro-USD."""
    if whole_micros == 0:
        return "0"
    hundredths = part_micros * 10_000 // whole_micros
    return format_units(hundredths, 2)


@dataclass(frozen=True)
class UsdBreakdown:
    """The quote in micro-USD: fees rounded down one by one, the leg input the remainder."""

    amount_in: int
    amount_out: int
    relayer_gas: int
    relayer_service: int
    app: int
    sponsored: int

    @classmethod
    def of(cls, quote: Quote) -> UsdBreakdown:
        amount_in = quote.in_usd(quote.split.amount_in)
        amount_out = quote.out_usd(quote.amount_out)
        relayer_gas = quote.in_usd(quote.split.relayer_gas)
        app = quote.in_usd(quote.split.app_total)
        sponsored = quote.in_usd(quote.split.sponsored)
        if not quote.leg.is_swap:
            return cls.without_swap(amount_in, amount_out, relayer_gas, app, sponsored)
        relayer_service = quote.in_usd(quote.split.relayer_service)
        return cls(amount_in, amount_out, relayer_gas, relayer_service, app, sponsored)

    @classmethod
    def without_swap(
        cls, amount_in: int, amount_out: int, relayer_gas: int = 0, app: int = 0, sponsored: int = 0
    ) -> UsdBreakdown:
        """No swap, no swap impact: the sub-micro rounding residue is the service's."""
        relayer_service = amount_in + sponsored - amount_out - relayer_gas - app
        return cls(amount_in, amount_out, relayer_gas, relayer_service, app, sponsored)

    @property
    def leg_input(self) -> int:
        return self.amount_in + self.sponsored - self.relayer_gas - self.relayer_service - self.app

    @property
    def swap_impact(self) -> int:
        return self.amount_out - self.leg_input

    @property
    def total_impact(self) -> int:
        return self.amount_out - self.amount_in


def _fees(quote: Quote, amounts: _AnswerAmounts) -> dict[str, Any]:
    split = quote.split
    return {
        "gas": amounts.of(quote.origin, quote.origin.native_currency, quote.deposit_gas_wei),
        "relayer": amounts.of_input(split.relayer),
        "relayerGas": amounts.of_input(split.relayer_gas),
        "relayerService": amounts.of_input(split.relayer_service),
        "app": amounts.of_input(split.app_total),
        "subsidized": amounts.of_input(split.sponsored),
    }


def _rate(quote: Quote) -> str:
    return format_rate(
        quote.split.amount_in,
        quote.currency_in.decimals,
        quote.amount_out,
        quote.currency_out.decimals,
    )


def _slippage(quote: Quote) -> dict[str, Any]:
    if not quote.leg.is_swap:
        return no_slippage()
    none = {"usd": "0", "value": "0", "percent": "0"}
    value = quote.amount_out - quote.minimum_out
    tolerance = {
        "usd": format_usd(quote.out_usd(value)),
        "value": str(value),
        "percent": format_units(quote.slippage_bps, 2),
    }
    if quote.kind is RouteKind.SAME_CHAIN_SWAP:
        return {"origin": tolerance, "destination": none}
    return {"origin": none, "destination": tolerance}


def route_leg(
    input_amount: dict[str, Any], output_amount: dict[str, Any], sources: tuple[str, ...]
) -> dict[str, Any]:
    return {
        "inputCurrency": input_amount,
        "outputCurrency": output_amount,
        "router": sources[0] if sources else SERVICE_ROUTER,
        "includedSwapSources": list(sources),
    }


def _route(
    quote: Quote,
    currency_in: dict[str, Any],
    currency_out: dict[str, Any],
    amounts: _AnswerAmounts,
) -> dict[str, Any]:
    sources = quote.leg.route.sources if quote.leg.route is not None else ()
    if quote.kind.same_chain:
        origin = route_leg(currency_in, currency_out, sources)
        return {"origin": origin, "destination": route_leg(currency_out, currency_out, ())}
    leg_input = amounts.of(quote.leg.chain, quote.leg.currency_in, quote.split.leg_input)
    return {
        "origin": route_leg(currency_in, currency_in, ()),
        "destination": route_leg(leg_input, currency_out, sources),
    }


def _gas_topup(quote: Quote, amounts: _AnswerAmounts) -> dict[str, Any] | None:
    """`currencyGasTopup`: the destination gas currency the fill delivers (`topupGas`)."""
    if quote.gas_topup == 0:
        return None
    return amounts.of(quote.destination, quote.destination.native_currency, quote.gas_topup)


def _details(quote: Quote, user_balance: int | None, amounts: _AnswerAmounts) -> dict[str, Any]:
    usd = UsdBreakdown.of(quote)
    currency_in = amounts.of_input(quote.split.amount_in)
    currency_out = amounts.of(
        quote.destination, quote.currency_out, quote.amount_out, quote.minimum_out
    )
    return {
        "operation": quote.kind.operation,
        "sender": quote.user,
        "recipient": quote.recipient,
        "currencyIn": currency_in,
        "currencyOut": currency_out,
        "refundCurrency": currency_in,
        "currencyGasTopup": _gas_topup(quote, amounts),
        **impacts_wire(usd),
        "rate": _rate(quote),
        "slippageTolerance": _slippage(quote),
        "timeEstimate": 0
        if quote.kind.same_chain
        else quote.destination.fees.fill_time_estimate_seconds,
        "userBalance": "0" if user_balance is None else str(user_balance),
        # No quote is served by a fallback route: there is none.
        "fallbackType": None,
        # A bridge's rate is fixed (one asset); a fixed-rate quote's spread is too.
        "isFixedRate": not quote.leg.is_swap,
        "fixedRateFee": fixed_rate_fee_wire(usd, fixed=quote.fixed_rate_bps is not None),
        "route": _route(quote, currency_in, currency_out, amounts),
    }


def impacts_wire(usd: UsdBreakdown) -> dict[str, Any]:
    """`totalImpact`, `swapImpact` and `expandedPriceImpact` of the details."""
    return {
        "totalImpact": {
            "usd": format_usd(usd.total_impact),
            "percent": _percent(usd.total_impact, usd.amount_in),
        },
        "swapImpact": {
            "usd": format_usd(usd.swap_impact),
            "percent": _percent(usd.swap_impact, usd.amount_in),
        },
        "expandedPriceImpact": {
            "swap": {"usd": format_usd(usd.swap_impact)},
            "execution": {"usd": format_usd(-usd.relayer_gas)},
            "relay": {"usd": format_usd(-usd.relayer_service)},
            "app": {"usd": format_usd(-usd.app)},
            "sponsored": {"usd": format_usd(usd.sponsored)},
        },
    }


def fixed_rate_fee_wire(usd: UsdBreakdown, *, fixed: bool) -> dict[str, str] | None:
    """`fixedRateFee`: what a fixed-rate quote's spread charges (gas included)."""
    return {"usd": format_usd(usd.relayer_gas + usd.relayer_service)} if fixed else None


def no_slippage() -> dict[str, Any]:
    """`slippageTolerance` of a quote without a swap: none on either side."""
    none = {"usd": "0", "value": "0", "percent": "0"}
    return {"origin": none, "destination": dict(none)}


def _fee_sponsorship(quote: Quote, amounts: _AnswerAmounts) -> dict[str, Any]:
    return fee_sponsorship_wire(
        quote.sponsorship,
        fees=quote.split.relayer + quote.split.app_total,
        amount=amounts.of_input,
    )


def fee_sponsorship_wire(
    sponsorship: Sponsorship, *, fees: int, amount: Callable[[int], dict[str, Any]]
) -> dict[str, Any]:
    """`feeSponsorship` of the fees charged (input units), `amount` wiring an input amount."""
    user_pays = fees - sponsorship.sponsored
    quoted: dict[str, Any] = {
        "selectedComponents": list(sponsorship.selected),
        "capHit": sponsorship.cap_hit,
        "components": {
            component.name: {
                "selected": component.selected,
                "total": amount(component.total),
                "sponsored": amount(component.sponsored),
                "userPays": amount(component.user_pays),
            }
            for component in sponsorship.components
        },
        "sponsoredTotal": amount(sponsorship.sponsored),
        "userPaysTotal": amount(user_pays),
    }
    if sponsorship.cap_usd_micros is not None:
        quoted["maxSubsidizationAmount"] = str(sponsorship.cap_usd_micros)
    # What was actually sponsored is known once the request executes (its record says so).
    return {"quoted": quoted, "actual": None}


def app_fee_entries(quote: Quote) -> list[dict[str, Any]]:
    """Per recipient, as the request record's `appFees.quoted` lists them."""
    return [
        {
            "recipient": share.recipient,
            "bps": str(share.bps),
            "amount": str(amount),
            "amountFormatted": format_units(amount, quote.currency_in.decimals),
            "amountUsd": format_usd(quote.in_usd(amount)),
        }
        for share, amount in zip(quote.app_fees, quote.split.app, strict=True)
    ]


def quote_wire(
    quote: Quote,
    *,
    allowance: int | None,
    user_balance: int | None,
    order_signature: str | None = None,
) -> dict[str, Any]:
    protocol: dict[str, Any] = {
        "orderId": quote.order_id,
        "hubType": "onchain",
        "orderData": quote.order.wire(),
        "paymentDetails": {
            "chainId": quote.origin.protocol_name,
            # Where the payment goes: the Depository, or the Receiver for v1.
            "depository": deposit_target(quote),
            "currency": quote.currency_in.address.lower(),
            "amount": str(quote.split.amount_in),
        },
    }
    if order_signature is not None:
        protocol["orderSignature"] = order_signature
    amounts = _AnswerAmounts(quote)
    return {
        "steps": steps(quote, allowance=allowance),
        "fees": _fees(quote, amounts),
        "feeSponsorship": _fee_sponsorship(quote, amounts),
        "details": _details(quote, user_balance, amounts),
        "protocol": {"v2": protocol},
    }


def price_wire(quote: Quote, *, user_balance: int | None) -> dict[str, Any]:
    """POST /price: the quote's fees and details, without steps or the protocol order."""
    amounts = _AnswerAmounts(quote)
    return {"fees": _fees(quote, amounts), "details": _details(quote, user_balance, amounts)}
