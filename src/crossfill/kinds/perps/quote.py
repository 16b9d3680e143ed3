"""Quotes that deposit to the perps exchange (chain 1337) from an EVM chain (pure).

The user deposits on the EVM chain's Depository as for any bridge; the solver pays the
recipient's exchange account from its own with a signed transfer. The output is the input's
USD value at the quoted prices less the EVM side's service fee: USDC to perps USDC is a
bridge, anything else (ETH to perps USDC, USDC to a spot token) a cross-chain swap priced the
same way, since the solver pays from its exchange inventory and keeps the deposit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from crossfill.domain.order import Order
from crossfill.kinds.perps.config import (
    PERPS_USDC_ADDRESS,
    PERPS_USDC_DECIMALS,
    PerpsExchangeConfig,
)
from crossfill.quoting import inputs
from crossfill.quoting.cross_vm import (
    EvmSide,
    QuotedCurrency,
    QuoteStamp,
    TransferTerms,
    bridged,
    priced_transfer,
    quoted_evm_currency,
    transfer_order,
)
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.fees import TradeType
from crossfill.quoting.request import QuoteRequest


@dataclass(frozen=True)
class PerpsDepositQuote:
    request_id: str
    order: Order
    terms: TransferTerms
    created_at: datetime
    expires_at: datetime

    @property
    def order_id(self) -> str:
        return "0x" + self.order.order_id().hex()

    @property
    def request_type(self) -> str:
        return "Bridge" if self.terms.is_bridge else "Crosschain Swap"


@dataclass(frozen=True)
class PerpsQuoteContext:
    evm: EvmSide
    perps: PerpsExchangeConfig
    # The EVM currency's live USD price, when the service has one (else its configured one).
    evm_price: Decimal | None
    stamp: QuoteStamp


def perps_currency(perps: PerpsExchangeConfig, address: str, field: str) -> QuotedCurrency:
    """Perps USDC (`0x` + 32 zeros) or a configured spot token (its tokenId, plus a DEX's
    hex name for a third-party DEX's), hex matched without regard to case."""
    if address.lower() == PERPS_USDC_ADDRESS:
        return QuotedCurrency(
            perps.id, perps.name, PERPS_USDC_ADDRESS, "USDC", "USD Coin (perps)",
            PERPS_USDC_DECIMALS, False, "", perps.usdc_usd_price,
        )  # fmt: skip
    spot, usd = bridged(perps.spot_currency(address), (field, address), perps.id)
    return QuotedCurrency(
        perps.id, perps.name, spot.address, spot.symbol, spot.name, spot.decimals, False,
        spot.logo_uri, usd,
    )  # fmt: skip


def exchange_accounts(body: QuoteRequest) -> tuple[str, str, str]:
    """(user, recipient, refund recipient), each an EVM address (as an exchange account is):
    the user's own unless the request names another."""
    user = inputs.address(body.user, "INVALID_ADDRESS", "user")
    recipient = inputs.address(body.recipient or user, "INVALID_RECIPIENT", "recipient")
    refund_to = inputs.address(body.refund_to or user, "INVALID_ADDRESS", "refundTo")
    return user, recipient, refund_to


def plan_perps_deposit(body: QuoteRequest, context: PerpsQuoteContext) -> PerpsDepositQuote:
    if inputs.trade_type(body.trade_type) is not TradeType.EXACT_INPUT:
        raise QuoteError(
            "UNSUPPORTED_EXECUTION_TYPE", "perps exchange routes are quoted EXACT_INPUT only"
        )
    amount_in = inputs.amount(body.amount)
    accounts = exchange_accounts(body)
    currency_in = quoted_evm_currency(
        context.evm, body.origin_currency, "originCurrency", context.evm_price
    )
    currency_out = perps_currency(context.perps, body.destination_currency, "destinationCurrency")
    terms = priced_transfer(
        accounts, (currency_in, currency_out), amount_in, context.evm.fees.service_fee_bps
    )
    stamp = context.stamp
    expires_at = stamp.expires_at
    return PerpsDepositQuote(
        request_id=stamp.request_id_hex,
        order=transfer_order(terms, stamp, deadline=int(expires_at.timestamp())),
        terms=terms,
        created_at=stamp.now,
        expires_at=expires_at,
    )
