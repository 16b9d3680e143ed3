"""Request bodies of the app-fee routes, and their parsing into the use cases' types."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from crossfill.api.params import ChainIdField
from crossfill.app.app_fees import ClaimAsked
from crossfill.domain.app_fee_claim import ClaimTerms
from crossfill.domain.identifiers import (
    UINT256_LIMIT,
    InvalidIdentifier,
    parse_address,
    parse_row_id,
    parse_uint,
    parse_unix_seconds,
)
from crossfill.domain.typed_signatures import is_hex_signature
from crossfill.errors import BadRequest
from crossfill.types import Address

_ADDRESS_TEXT = Field(max_length=100)


class ClaimBody(BaseModel):
    """POST /app-fees/{wallet}/claim (the SDK's claimAppFees sends all four)."""

    model_config = ConfigDict(extra="ignore")

    chainId: ChainIdField
    currency: StrictStr = _ADDRESS_TEXT
    recipient: StrictStr | None = Field(default=None, max_length=100)
    amount: StrictStr | None = Field(default=None, max_length=100)


class ClaimTermsBody(BaseModel):
    """POST /app-fees/{wallet}/claims: the signed terms, as the claim step's `post.body` carries
    them (the SDK adds `referrer`: ignored)."""

    model_config = ConfigDict(extra="ignore")

    wallet: StrictStr = _ADDRESS_TEXT
    recipient: StrictStr = _ADDRESS_TEXT
    chainId: ChainIdField
    currency: StrictStr = _ADDRESS_TEXT
    amount: StrictStr = Field(max_length=100)
    throughFeeId: StrictInt
    expiry: StrictInt


def claim_asked(wallet: Address, body: ClaimBody) -> ClaimAsked:
    try:
        return ClaimAsked(
            wallet=wallet,
            chain_id=body.chainId,
            currency=parse_address(body.currency, "currency"),
            recipient=parse_address(body.recipient or wallet, "recipient"),
            amount=None
            if body.amount is None
            else parse_uint(body.amount, "amount", maximum=UINT256_LIMIT - 1),
        )
    except InvalidIdentifier as exc:
        raise BadRequest(str(exc)) from None


def claim_signature(signature: str) -> str:
    """65 bytes, 0x-prefixed hex (whose they are is the use case's to check)."""
    if not is_hex_signature(signature):
        raise BadRequest("signature must be 0x-prefixed hex of 65 bytes")
    return signature


def claim_terms(body: ClaimTermsBody) -> ClaimTerms:
    try:
        return ClaimTerms(
            wallet=parse_address(body.wallet, "wallet"),
            recipient=parse_address(body.recipient, "recipient"),
            chain_id=body.chainId,
            currency=parse_address(body.currency, "currency"),
            amount=parse_uint(body.amount, "amount", maximum=UINT256_LIMIT - 1),
            through_fee_id=parse_row_id(body.throughFeeId, "throughFeeId"),
            expiry=parse_unix_seconds(body.expiry, "expiry"),
        )
    except InvalidIdentifier as exc:
        raise BadRequest(str(exc)) from None
