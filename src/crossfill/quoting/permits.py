"""The signature step of a `usePermit` quote: the user signs a deposit authorization (EIP-712)
and the wallet posts it to `POST /execute/permits`; the solver then sends the deposit."""

from __future__ import annotations

from typing import Any

from crossfill.domain.deposit_authorization import SIGNATURE_KIND, DepositAuthorization
from crossfill.quoting.engine import Quote

PERMITS_ENDPOINT = "/execute/permits"


def deposit_authorization(quote: Quote) -> DepositAuthorization:
    assert quote.permit_valid_before is not None
    return DepositAuthorization(
        chain_id=quote.origin.id,
        token=quote.currency_in.address,
        token_name=quote.currency_in.name,
        depositor=quote.user,
        depository=quote.origin.contracts.depository,
        amount=quote.split.amount_in,
        valid_after=0,
        valid_before=quote.permit_valid_before,
        order_id=quote.order_id,
    )


def permit_item(quote: Quote, check: dict[str, str]) -> dict[str, Any]:
    """The step item: what to sign, where to post the signature, and the status to poll."""
    return {
        "status": "incomplete",
        "data": {
            "sign": deposit_authorization(quote).sign_data(),
            "post": {
                "endpoint": PERMITS_ENDPOINT,
                "method": "POST",
                "body": {
                    "kind": SIGNATURE_KIND,
                    "requestId": quote.request_id,
                    "api": "swap" if quote.leg.is_swap else "bridge",
                },
            },
        },
        "check": check,
    }
