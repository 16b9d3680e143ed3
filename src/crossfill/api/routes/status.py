"""GET /intents/status/v3 (and the unversioned /intents/status)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from crossfill.api.deps import RuntimeDep
from crossfill.domain.status import RequestStatus
from crossfill.domain.status_record import RequestFacts, status_record
from crossfill.errors import NotFound
from crossfill.store import requests

router = APIRouter(tags=["status"])
IN_KINDS = frozenset({"deposit"})


async def _status(runtime: RuntimeDep, request_id: str) -> dict[str, Any]:
    async with runtime.sessions() as session:
        request = await requests.get(session, request_id.lower())
        if request is None:
            raise NotFound(f"request {request_id} not found")
        transactions = await requests.transactions_of(session, request.id)
    facts = RequestFacts(
        request_id=request.id,
        status=RequestStatus(request.status),
        origin_chain_id=request.origin_chain_id,
        destination_chain_id=request.destination_chain_id,
        in_tx_hashes=[tx.tx_hash for tx in transactions if tx.kind in IN_KINDS],
        out_tx_hashes=[tx.tx_hash for tx in transactions if tx.kind not in IN_KINDS],
        updated_at_ms=requests.as_utc_ms(request.updated_at),
        created_at_ms=requests.as_utc_ms(request.created_at),
        fail_reason=request.fail_reason,
        refund_fail_reason=request.refund_fail_reason,
    )
    return status_record(facts)


RequestIdQuery = Annotated[str, Query(alias="requestId", min_length=1, max_length=100)]
ReferrerQuery = Annotated[str | None, Query(description="Integrator name; accepted, unused")]


@router.get("/intents/status/v3")
async def status_v3(
    runtime: RuntimeDep, request_id: RequestIdQuery, referrer: ReferrerQuery = None
) -> dict[str, Any]:
    return await _status(runtime, request_id)


@router.get("/intents/status")
async def status(
    runtime: RuntimeDep, request_id: RequestIdQuery, referrer: ReferrerQuery = None
) -> dict[str, Any]:
    return await _status(runtime, request_id)
