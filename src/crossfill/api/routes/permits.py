"""POST /execute/permits: a `usePermit` quote's signed deposit authorization, posted by the
wallet (the signature in the query, as the official SDK sends it)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel

from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.schemas.responses import Accepted
from crossfill.app.permits import accept_permit

router = APIRouter(tags=["execute"])


class PermitBody(BaseModel):
    kind: str
    requestId: str
    api: str | None = None
    referrer: str | None = None


@router.post("/execute/permits", response_model=None, responses=responses(Accepted, 400, 404, 429))
async def post_permit(
    body: PermitBody, signature: Annotated[str, Query(max_length=200)], runtime: RuntimeDep
) -> dict[str, str]:
    """Check the signature against the quote and queue the deposit the solver sends for it."""
    await accept_permit(runtime, body.requestId, signature, body.kind)
    return {"message": "Permit accepted", "requestId": body.requestId}
