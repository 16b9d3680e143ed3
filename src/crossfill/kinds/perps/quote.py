"""Quotes that deposit to the perps exchange (chain 1337) from an EVM chain (pure).

The user deposits on the EVM chain's Depository as for any bridge; the solver pays the
recipient's exchange account from its own with a signed transfer. The output is the input's
USD value at the quoted prices less the EVM side's service fee: USDC to perps USDC is a
bridge, anything else (ETH to perps USDC, USDC to a spot token) a cross-chain swap priced the
same way, since the solver pays from its exchange inventory and keeps the deposit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from crossfill.config import ChainConfig
from crossfill.domain.order import InputRefund, Order, OrderInput, OrderOutput, OutputPayment
from crossfill.kinds.perps.config import (
    PERPS_USDC_ADDRESS,
    PERPS_USDC_DECIMALS,
    PerpsExchangeConfig,
)
from crossfill.quoting import inputs
from crossfill.quoting.cross_vm import QuotedCurrency, fixed_rate_output, quoted_evm_currency
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.fees import TradeType
from crossfill.quoting.request import QuoteRequest


@dataclass(frozen=True)
class PerpsDepositQuote:
    request_id: str
    order: Order
    user: str
    recipient: str
    refund_to: str
    currency_in: QuotedCurrency
    currency_out: QuotedCurrency
    amount_in: int
    amount_out: int
    service_fee: int  # in input units
    created_at: datetime
    expires_at: datetime

    @property
    def order_id(self) -> str:
        return "0x" + self.order.order_id().hex()

    @property
    def request_type(self) -> str:
        same_asset = self.currency_in.symbol == self.currency_out.symbol
        return "Bridge" if same_asset else "Crosschain Swap"


@dataclass(frozen=True)
class PerpsQuoteContext:
    evm: ChainConfig
    perps: PerpsExchangeConfig
    # The EVM currency's live USD price, when the service has one (else its configured one).
    evm_price: Decimal | None
    now: datetime
    ttl: timedelta
    request_id: bytes
    salt: int
    solver: str


def perps_currency(perps: PerpsExchangeConfig, address: str, field: str) -> QuotedCurrency:
    """Perps USDC (`0x` + 32 zeros) or a configured spot token (its tokenId, plus a DEX's
    hex name for a third-party DEX's), hex matched without regard to case."""
    if address.lower() == PERPS_USDC_ADDRESS:
        return QuotedCurrency(
            perps.id, perps.name, PERPS_USDC_ADDRESS, "USDC", "USD Coin (perps)",
            PERPS_USDC_DECIMALS, False, "", perps.usdc_usd_price,
        )  # fmt: skip
    spot = perps.spot_currency(address)
    if spot is None or not spot.supports_bridging:
        raise QuoteError(
            "UNSUPPORTED_CURRENCY", f"{field} {address} is not supported on chain {perps.id}"
        )
    if spot.usd_price is None:
        raise QuoteError("UNSUPPORTED_CURRENCY", f"{field} {address} has no price")
    return QuotedCurrency(
        perps.id, perps.name, spot.address, spot.symbol, spot.name, spot.decimals, False,
        spot.logo_uri, spot.usd_price,
    )  # fmt: skip


def _order(
    context: PerpsQuoteContext, currency_in: QuotedCurrency, currency_out: QuotedCurrency,
    amount_in: int, amount_out: int, recipient: str, refund_to: str, deadline: int,
) -> Order:  # fmt: skip
    def raw(address: str) -> bytes:
        return bytes.fromhex(address[2:])

    origin, destination = context.evm.protocol_name, context.perps.name
    refund = InputRefund(origin, raw(refund_to), raw(currency_in.address), 0, deadline)
    payment = OutputPayment(raw(recipient), raw(currency_out.address), amount_out, amount_out)
    return Order(
        solver_chain_id=destination,
        solver=context.solver,
        salt=context.salt,
        inputs=(OrderInput(origin, raw(currency_in.address), amount_in, (refund,)),),
        output=OrderOutput(destination, (payment,), deadline),
    )


def plan_perps_deposit(body: QuoteRequest, context: PerpsQuoteContext) -> PerpsDepositQuote:
    if inputs.trade_type(body.trade_type) is not TradeType.EXACT_INPUT:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE", "perps exchange routes are quoted EXACT_INPUT only"
        )
    amount_in = inputs.amount(body.amount)
    user = inputs.address(body.user, "INVALID_ADDRESS", "user")
    # An exchange account is an EVM address.
    recipient = inputs.address(body.recipient or user, "INVALID_RECIPIENT", "recipient")
    refund_to = inputs.address(body.refund_to or user, "INVALID_ADDRESS", "refundTo")
    currency_in = quoted_evm_currency(
        context.evm, body.origin_currency, "originCurrency", context.evm_price
    )
    currency_out = perps_currency(context.perps, body.destination_currency, "destinationCurrency")
    amount_out, fee = fixed_rate_output(
        amount_in, context.evm.fees.service_fee_bps, currency_in, currency_out
    )
    if amount_out <= 0:
        raise QuoteError("AMOUNT_TOO_LOW", "the amount does not cover the fees")
    expires_at = context.now + context.ttl
    order = _order(
        context, currency_in, currency_out, amount_in, amount_out, recipient, refund_to,
        int(expires_at.timestamp()),
    )  # fmt: skip
    return PerpsDepositQuote(
        request_id="0x" + context.request_id.hex(),
        order=order,
        user=user,
        recipient=recipient,
        refund_to=refund_to,
        currency_in=currency_in,
        currency_out=currency_out,
        amount_in=amount_in,
        amount_out=amount_out,
        service_fee=fee,
        created_at=context.now,
        expires_at=expires_at,
    )
