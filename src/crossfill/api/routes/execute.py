"""POST /execute: a call sent and paid for by the API key's gas sponsor (gasless execution)."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter

from crossfill.api.auth import ExecutingDep
from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.schemas.execute import ExecuteBody
from crossfill.api.schemas.responses import Executed
from crossfill.app.gasless import accept

router = APIRouter(tags=["execute"])


@router.post(
    "/execute",
    response_model=None,
    responses=responses(Executed, 400, 401, 403, 404, 409, 429, 503),
)
async def execute(body: ExecuteBody, runtime: RuntimeDep, caller: ExecutingDep) -> dict[str, str]:
    """Send `data` (a type-4 transaction carrying its EIP-7702 authorizations) from the key's
    sponsor wallet: for the quoted request `requestId`; without it, for the quoted request the
    call deposits for, else as a request of its own (`Call`). Poll the answered request's
    status afterwards."""
    order = body.to_order()
    assert caller.key_id is not None  # ExecutingDep
    request_id = await accept(runtime, order, caller.key_id, now=datetime.now(UTC))
    return {"message": "Transaction submitted", "requestId": request_id}
