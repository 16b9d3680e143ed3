"""POST /fast-fill (the SDK's fastFill): filling a request before its deposit is final,
backed by the app's balance. Not offered by this service: an authenticated, well-formed call
is refused with 403, so integrators learn it at once instead of waiting for a fill."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from crossfill.api.auth import AuthenticatedDep
from crossfill.api.openapi import responses
from crossfill.domain.identifiers import InvalidIdentifier, parse_tx_hash, parse_uint
from crossfill.errors import BadRequest, Forbidden

router = APIRouter(tags=["fast-fill"])


class FastFillBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    requestId: StrictStr = Field(max_length=100)
    solverInputCurrencyAmount: StrictStr | None = Field(default=None, max_length=100)
    maxFillAmountUsd: float | None = Field(default=None, ge=0)


@router.post("/fast-fill", response_model=None, responses=responses(None, 400, 401, 403, 429))
async def fast_fill(body: FastFillBody, caller: AuthenticatedDep) -> None:
    """Always 403 here: fast fills are not offered by this deployment."""
    try:
        parse_tx_hash(body.requestId, "requestId")
        if body.solverInputCurrencyAmount is not None:
            parse_uint(
                body.solverInputCurrencyAmount, "solverInputCurrencyAmount", maximum=2**256 - 1
            )
    except InvalidIdentifier as exc:
        raise BadRequest(str(exc)) from None
    raise Forbidden(
        "Fast fills are not offered by this deployment: requests are filled once their "
        "deposit is confirmed",
        error_code="FAST_FILL_DISABLED",
    )
