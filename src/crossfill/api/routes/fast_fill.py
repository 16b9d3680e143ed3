"""POST /fast-fill (the SDK's fastFill): fill a request once its deposit is seen, before its
confirmations, backed by the app's balance (`app.fast_fills`). Refused with 403
FAST_FILL_DISABLED unless the operator turned fast fills on."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from crossfill.api.auth import AuthenticatedDep
from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.app.fast_fills import FastFillOrder, request_fast_fill
from crossfill.domain.identifiers import InvalidIdentifier, parse_tx_hash, parse_uint
from crossfill.errors import BadRequest
from crossfill.quoting.money import MICROS_PER_USD

router = APIRouter(tags=["fast-fill"])


class FastFillBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    requestId: StrictStr = Field(max_length=100)
    solverInputCurrencyAmount: StrictStr | None = Field(default=None, max_length=100)
    maxFillAmountUsd: float | None = Field(default=None, ge=0, le=10**12)

    def to_order(self) -> FastFillOrder:
        try:
            request_id = parse_tx_hash(self.requestId, "requestId")
            amount = (
                None
                if self.solverInputCurrencyAmount is None
                else parse_uint(
                    self.solverInputCurrencyAmount, "solverInputCurrencyAmount", maximum=2**256 - 1
                )
            )
        except InvalidIdentifier as exc:
            raise BadRequest(str(exc)) from None
        cap = self.maxFillAmountUsd
        return FastFillOrder(
            request_id=request_id,
            solver_input_amount=amount,
            max_fill_usd_micros=None if cap is None else int(Decimal(str(cap)) * MICROS_PER_USD),
        )


class FastFillQueued(BaseModel):
    message: str


@router.post(
    "/fast-fill", response_model=FastFillQueued, responses=responses(None, 400, 401, 403, 404, 429)
)
async def fast_fill(
    body: FastFillBody, caller: AuthenticatedDep, runtime: RuntimeDep
) -> FastFillQueued:
    """Queue the request for a fill on its deposit seen on chain, before its confirmations."""
    order = body.to_order()
    assert caller.key_id is not None  # AuthenticatedDep answered 401 otherwise
    message = await request_fast_fill(runtime, order, caller.key_id, now=datetime.now(UTC))
    return FastFillQueued(message=message)
