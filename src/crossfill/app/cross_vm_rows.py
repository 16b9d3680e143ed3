"""The stored request row of a quote with one side off the EVM chains (the SVM chain, the perps
exchange): the same columns for each kind; each adds its own plan, and the EVM destination's
fill, when there is one, is a plain payment planned once here."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from crossfill.app.fills import FillTerms, plan_fill
from crossfill.kinds.evm.config import ChainConfig
from crossfill.quoting import inputs
from crossfill.quoting.deposit_steps import QuotedTransfer
from crossfill.quoting.request import QuoteRequest


class CrossVmQuote(QuotedTransfer, Protocol):
    """What the row needs of an SVM or perps quote beyond the transfer itself."""

    @property
    def created_at(self) -> datetime: ...
    @property
    def expires_at(self) -> datetime: ...


def evm_payment_plan(quote: CrossVmQuote, evm: ChainConfig) -> dict[str, Any]:
    """The EVM destination's fill: the quoted output paid to the recipient (no swap, no calls),
    planned once at quote time as for EVM origins."""
    terms = FillTerms(
        order_id=quote.order_id,
        recipient=quote.terms.recipient,
        currency=quote.terms.currency_out.address,
        amount_out=quote.terms.amount_out,
        expires_at=quote.expires_at,
        swap=None,
        leg_currency=quote.terms.currency_out.address,
        calls=(),
    )
    return plan_fill(terms, evm).to_json()


def request_row(
    quote: CrossVmQuote,
    wire: dict[str, Any],
    body: QuoteRequest,
    api_key_id: int | None,
    *,
    request_type: str,
    plan: dict[str, Any],
    fill_plan: dict[str, Any] | None,
) -> dict[str, Any]:
    """The `requests` row; currencies as quoted (EVM addresses lower-cased as every EVM row,
    base58 exactly as given)."""
    return {
        "id": quote.request_id,
        "order_id": quote.order_id,
        "status": "waiting",
        "origin_chain_id": quote.terms.currency_in.chain_id,
        "destination_chain_id": quote.terms.currency_out.chain_id,
        "user_address": quote.terms.user,
        "recipient": quote.terms.recipient,
        "refund_to": quote.terms.refund_to,
        "origin_currency": quote.terms.currency_in.address,
        "destination_currency": quote.terms.currency_out.address,
        "trade_type": body.trade_type,
        "amount_in": str(quote.terms.amount_in),
        "amount_out": str(quote.terms.amount_out),
        "minimum_amount_out": str(quote.terms.amount_out),
        "amount_in_usd_micros": quote.terms.currency_in.usd_micros(quote.terms.amount_in),
        "explicit_deposit": True,
        "quote": wire,
        "referrer": inputs.referrer(body.referrer),
        "api_key_id": api_key_id,
        "expires_at": quote.expires_at,
        "created_at": quote.created_at,
        "updated_at": quote.created_at,
        "request_type": request_type,
        "currency_in_symbol": quote.terms.currency_in.symbol,
        "currency_out_symbol": quote.terms.currency_out.symbol,
        "features_mask": 0,
        "app_fees_usd_micros": 0,
        "plan": plan,
        "fill_plan": fill_plan,
    }
