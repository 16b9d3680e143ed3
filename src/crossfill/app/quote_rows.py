"""A quote as the rows it stores (`store.requests.QuoteRows`, for the caller to insert): its
request, with what the solver needs beyond the order, its app-fee shares and its sponsor
payment, as column values."""

from __future__ import annotations

from typing import Any

from crossfill.domain.enums import features_mask
from crossfill.domain.status import RequestStatus
from crossfill.quoting.engine import Quote
from crossfill.store import app_fees, sponsor_payments
from crossfill.store.requests import QuoteRows


def plan_of(quote: Quote) -> dict[str, Any]:
    """What the solver needs to execute the destination leg, beyond the order itself."""
    return {
        "kind": quote.kind.value,
        "legCurrency": quote.leg.currency_in.address.lower(),
        "legAmount": str(quote.split.leg_input),
        "swap": None if quote.swap_plan is None else quote.swap_plan.to_json(),
        # The fill pays amountOut exactly (the swap's surplus goes to the solver).
        "trueExactOutput": quote.true_exact_output,
        "calls": [
            {"to": call.to, "value": str(call.value), "data": "0x" + call.data.hex()}
            for call in quote.calls
        ],
        # `usePermit`: the deposit authorization's bound, to check the signature posted later.
        "permit": None
        if quote.permit_valid_before is None
        else {"validBefore": quote.permit_valid_before},
        "sponsorPayment": None
        if quote.sponsor is None
        else {
            "amount": str(quote.sponsor_payment),
            "address": quote.sponsor.address.lower(),
            "chainId": quote.sponsor.chain_id,
        },
    }


def _features(quote: Quote, fees: list[dict[str, Any]]) -> list[str]:
    features = ["app_fees"] if fees else []
    if quote.deposit_address is not None:
        features.append("deposit_address")
    return features


def _deposit_address_columns(quote: Quote) -> dict[str, Any]:
    terms = quote.deposit_address
    if terms is None:
        return {}
    return {
        "deposit_address": terms.address,
        "deposit_address_type": terms.type,
        "recovery_address": terms.recovery_address,
        "deposit_address_key": terms.key,
    }


def quote_rows(
    quote: Quote, wire: dict[str, Any], *, referrer: str | None, api_key_id: int | None
) -> QuoteRows:
    """What a new quote stores (for the caller to insert)."""
    fees = quoted_shares(quote)
    request = {
        "id": quote.request_id,
        "order_id": quote.order_id,
        "status": RequestStatus.WAITING.value,
        "origin_chain_id": quote.origin.id,
        "destination_chain_id": quote.destination.id,
        "user_address": quote.user,
        "recipient": quote.recipient,
        "refund_to": quote.refund_to,
        "origin_currency": quote.currency_in.address.lower(),
        "destination_currency": quote.currency_out.address.lower(),
        "trade_type": quote.trade_type,
        "amount_in": str(quote.split.amount_in),
        "amount_out": str(quote.amount_out),
        "minimum_amount_out": str(quote.minimum_out),
        "amount_in_usd_micros": quote.in_usd(quote.split.amount_in),
        "explicit_deposit": quote.explicit_deposit,
        "quote": wire,
        "referrer": referrer,
        "api_key_id": api_key_id,
        "expires_at": quote.expires_at,
        "created_at": quote.created_at,
        "updated_at": quote.created_at,
        "request_type": quote.request_type,
        "currency_in_symbol": quote.currency_in.symbol,
        "currency_out_symbol": quote.currency_out.symbol,
        "features_mask": features_mask(_features(quote, fees)),
        "app_fees_usd_micros": sum(fee["amount_usd_micros"] for fee in fees),
        "plan": plan_of(quote),
        **_deposit_address_columns(quote),
    }
    return QuoteRows(request, fees, quoted_payment(quote))


def quoted_shares(quote: Quote) -> list[dict[str, Any]]:
    """The `app_fees` rows of a new quote, as column values."""
    return [
        {
            "request_id": quote.request_id,
            "recipient": share.recipient,
            "chain_id": quote.origin.id,
            "currency": quote.currency_in.address.lower(),
            "bps": share.bps,
            "quoted_amount": str(amount),
            "actual_amount": None,
            "amount_usd_micros": quote.in_usd(amount),
            "state": app_fees.QUOTED,
            "updated_at": quote.created_at,
        }
        for share, amount in zip(quote.app_fees, quote.split.app, strict=True)
    ]


def quoted_payment(quote: Quote) -> dict[str, Any] | None:
    """The `sponsor_payments` row of a new quote (column values), if a sponsor pays."""
    if quote.sponsor is None or quote.sponsor_payment == 0:
        return None
    return {
        "request_id": quote.request_id,
        "chain_id": quote.sponsor.chain_id,
        "currency": quote.sponsor.currency.lower(),
        "sponsor": quote.sponsor.address.lower(),
        "amount": str(quote.sponsor_payment),
        "amount_usd_micros": quote.in_usd(quote.sponsorship.sponsored),
        "state": sponsor_payments.QUOTED,
        "tx_hash": None,
        "updated_at": quote.created_at,
    }
