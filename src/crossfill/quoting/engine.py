"""Plan a bridge quote from the request body and a snapshot of chain state. No I/O here."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from crossfill.api.schemas.quote import QuoteBody
from crossfill.chains.state import ChainState
from crossfill.config import ChainConfig, CurrencyConfig, Deployment
from crossfill.config.deployment import QuoteSettings
from crossfill.domain.order import InputRefund, Order, OrderInput, OrderOutput, OutputPayment
from crossfill.errors import BadRequest
from crossfill.quoting.errors import QuoteError, QuoteUnavailable
from crossfill.quoting.fees import AmountTooLow, BridgeAmounts, TradeType, bridge_amounts
from crossfill.quoting.money import convert_ceil, to_usd_micros, usd_micros_per_unit
from crossfill.quoting.unsupported import reject_unsupported

_ADDRESS = re.compile(r"^0x[0-9a-fA-F]{40}$")
_UINT = re.compile(r"^[0-9]{1,78}$")
DEFAULT_SLIPPAGE_BPS = 50
FILL_WINDOW = timedelta(hours=1)


@dataclass(frozen=True)
class ChainView:
    """What the engine may read of a chain: its configuration and its live snapshot."""

    config: ChainConfig
    state: ChainState
    disabled: bool


@dataclass(frozen=True)
class Entropy:
    request_id: bytes
    salt: int


@dataclass(frozen=True)
class BridgeQuote:
    request_id: str
    order: Order
    order_id: str
    origin: ChainConfig
    destination: ChainConfig
    currency_in: CurrencyConfig
    currency_out: CurrencyConfig
    user: str
    recipient: str
    refund_to: str
    trade_type: TradeType
    amounts: BridgeAmounts
    deposit_gas_wei: int
    slippage_bps: int
    explicit_deposit: bool
    created_at: datetime
    expires_at: datetime

    def usd_micros(self, currency: CurrencyConfig, amount: int) -> int:
        assert currency.usd_price is not None  # checked when the quote was planned
        return to_usd_micros(amount, currency.decimals, usd_micros_per_unit(currency.usd_price))


def _address(value: str | None, error_code: str, field: str) -> str:
    if value is None or not _ADDRESS.match(value):
        raise QuoteError(error_code, f"{field} must be a 0x-prefixed 20-byte hex address")
    return value.lower()


def _chain(chains: Mapping[int, ChainView], chain_id: int, field: str) -> ChainView:
    view = chains.get(chain_id)
    if view is None:
        raise QuoteError("UNSUPPORTED_CHAIN", f"{field} {chain_id} is not a supported chain")
    if view.disabled:
        raise QuoteError("CHAIN_DISABLED", f"chain {chain_id} is disabled")
    return view


def _currency(view: ChainView, address: str, error_code: str, field: str) -> CurrencyConfig:
    _address(address, error_code, field)
    currency = view.config.currency(address)
    if currency is None or not currency.supports_bridging:
        raise QuoteError(
            "UNSUPPORTED_CURRENCY", f"{field} {address} is not supported on chain {view.config.id}"
        )
    return currency


def _trade_type(value: str) -> TradeType:
    if value == TradeType.EXPECTED_OUTPUT:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE", "tradeType EXPECTED_OUTPUT is not supported yet"
        )
    try:
        return TradeType(value)
    except ValueError:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE",
            "tradeType must be EXACT_INPUT, EXACT_OUTPUT or EXPECTED_OUTPUT",
        ) from None


def _amount(value: str) -> int:
    if not _UINT.match(value):
        raise QuoteError(
            "AMOUNT_TOO_LOW", "amount must be a positive integer string (smallest unit)"
        )
    amount = int(value)
    if amount <= 0 or amount >= 2**256:
        raise QuoteError("AMOUNT_TOO_LOW", "amount must be a positive integer below 2**256")
    return amount


def _slippage_bps(value: str | None) -> int:
    if value is None:
        return DEFAULT_SLIPPAGE_BPS
    if not _UINT.match(value) or int(value) > 10_000:
        raise QuoteError(
            "INVALID_SLIPPAGE_TOLERANCE", "slippageTolerance must be basis points from 0 to 10000"
        )
    return int(value)


def _ttl(value: int | None, settings: QuoteSettings) -> timedelta:
    if value is None:
        return timedelta(seconds=settings.ttl_seconds)
    if not settings.min_ttl_seconds <= value <= settings.max_ttl_seconds:
        raise BadRequest(
            f"ttl must be {settings.min_ttl_seconds}..{settings.max_ttl_seconds} seconds"
        )
    return timedelta(seconds=value)


def _price_micros(currency: CurrencyConfig, chain: ChainConfig) -> int:
    if currency.usd_price is None:
        raise QuoteUnavailable(
            "PRICE_FETCH_FAILED", f"no price for {currency.symbol} on chain {chain.id}"
        )
    return usd_micros_per_unit(currency.usd_price)


def _fee_per_gas(view: ChainView) -> int:
    fee = view.state.fee_per_gas(view.config.fees.base_fee_buffer_percent)
    if fee is None:
        raise QuoteUnavailable(
            "SERVICE_UNAVAILABLE", f"no fresh gas price for chain {view.config.id} yet"
        )
    return fee


def _fill_gas_cost(
    destination: ChainView,
    currency_in: CurrencyConfig,
    origin: ChainConfig,
    currency_out: CurrencyConfig,
) -> int:
    """The fill's gas on the destination, priced in the input currency."""
    fees = destination.config.fees
    gas = fees.fill_gas_native if currency_out.is_native else fees.fill_gas_erc20
    native = destination.config.native_currency
    return convert_ceil(
        gas * _fee_per_gas(destination),
        from_decimals=native.decimals,
        from_price=_price_micros(native, destination.config),
        to_decimals=currency_in.decimals,
        to_price=_price_micros(currency_in, origin),
    )


def _check_liquidity(destination: ChainView, currency_out: CurrencyConfig, amount_out: int) -> None:
    balance = destination.state.solver_balance(currency_out.address)
    if balance is None:
        raise QuoteUnavailable(
            "SERVICE_UNAVAILABLE",
            f"solver inventory on chain {destination.config.id} not known yet",
        )
    if balance < amount_out:
        raise QuoteError(
            "INSUFFICIENT_LIQUIDITY",
            f"the solver holds too little {currency_out.symbol} on chain {destination.config.id}",
        )


def plan_bridge(
    body: QuoteBody,
    *,
    chains: Mapping[int, ChainView],
    deployment: Deployment,
    now: datetime,
    entropy: Entropy,
) -> BridgeQuote:
    reject_unsupported(body)
    trade_type = _trade_type(body.tradeType)
    origin = _chain(chains, body.originChainId, "originChainId")
    destination = _chain(chains, body.destinationChainId, "destinationChainId")
    if origin.config.id == destination.config.id:
        raise QuoteError("UNSUPPORTED_ROUTE", "same-chain quotes are not supported yet")
    user = _address(body.user, "INVALID_ADDRESS", "user")
    recipient = _address(body.recipient or body.user, "INVALID_RECIPIENT", "recipient")
    refund_to = _address(body.refundTo or body.user, "INVALID_ADDRESS", "refundTo")
    currency_in = _currency(origin, body.originCurrency, "INVALID_INPUT_CURRENCY", "originCurrency")
    currency_out = _currency(
        destination, body.destinationCurrency, "INVALID_OUTPUT_CURRENCY", "destinationCurrency"
    )
    if (currency_in.symbol, currency_in.decimals) != (currency_out.symbol, currency_out.decimals):
        raise QuoteError(
            "UNSUPPORTED_ROUTE", "only same-asset bridges are supported yet (no swaps)"
        )
    amount = _amount(body.amount)
    slippage_bps = _slippage_bps(body.slippageTolerance)
    expires_at = now + _ttl(body.ttl, deployment.quotes)
    try:
        amounts = bridge_amounts(
            trade_type,
            amount,
            fill_gas_cost=_fill_gas_cost(destination, currency_in, origin.config, currency_out),
            service_fee_bps=destination.config.fees.service_fee_bps,
        )
    except AmountTooLow as exc:
        raise QuoteError("AMOUNT_TOO_LOW", f"amount too low: {exc}") from None
    _check_liquidity(destination, currency_out, amounts.amount_out)
    order = build_order(
        origin=origin.config,
        destination=destination.config,
        solver=deployment.solver.address,
        salt=entropy.salt,
        currency_in=currency_in,
        currency_out=currency_out,
        amounts=amounts,
        recipient=recipient,
        refund_to=refund_to,
        deadline=int((expires_at + FILL_WINDOW).timestamp()),
    )
    origin_fees = origin.config.fees
    deposit_gas = (
        origin_fees.deposit_gas_native if currency_in.is_native else origin_fees.deposit_gas_erc20
    )
    return BridgeQuote(
        request_id="0x" + entropy.request_id.hex(),
        order=order,
        order_id="0x" + order.order_id().hex(),
        origin=origin.config,
        destination=destination.config,
        currency_in=currency_in,
        currency_out=currency_out,
        user=user,
        recipient=recipient,
        refund_to=refund_to,
        trade_type=trade_type,
        amounts=amounts,
        deposit_gas_wei=deposit_gas * _fee_per_gas(origin),
        slippage_bps=slippage_bps,
        explicit_deposit=body.explicitDeposit,
        created_at=now,
        expires_at=expires_at,
    )


def build_order(
    *,
    origin: ChainConfig,
    destination: ChainConfig,
    solver: str,
    salt: int,
    currency_in: CurrencyConfig,
    currency_out: CurrencyConfig,
    amounts: BridgeAmounts,
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
        minimum_amount=amounts.amount_out,
        expected_amount=amounts.amount_out,
    )
    return Order(
        solver_chain_id=destination.protocol_name,
        solver=solver,
        salt=salt,
        inputs=(
            OrderInput(
                chain_id=origin.protocol_name,
                currency=raw(currency_in.address),
                amount=amounts.amount_in,
                refunds=(refund,),
            ),
        ),
        output=OrderOutput(
            chain_id=destination.protocol_name, payments=(payment,), deadline=deadline
        ),
    )
