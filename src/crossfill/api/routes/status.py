"""GET /intents/status/v3 (and the unversioned /intents/status)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from crossfill.api.answers import json_answer
from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.params import ReferrerQuery, RequestIdQuery
from crossfill.domain.status_record import status_record
from crossfill.errors import NotFound
from crossfill.store import requests

router = APIRouter(tags=["status"])
STATUS_RESPONSES = responses("status", 400, 401, 404, 429)


async def _status(runtime: RuntimeDep, request_id: str) -> dict[str, Any]:
    async with runtime.sessions() as session:
        request = await requests.get(session, request_id.lower())
        if request is None:
            raise NotFound(f"request {request_id} not found")
        transactions = await requests.transactions_of(session, request.id)
    facts = requests.facts_of(request, transactions)
    return status_record(facts)


@router.get("/intents/status/v3", response_model=None, responses=STATUS_RESPONSES)
async def status_v3(
    runtime: RuntimeDep, request_id: RequestIdQuery, referrer: ReferrerQuery = None
) -> Response:
    return json_answer(await _status(runtime, request_id))


@router.get("/intents/status", response_model=None, responses=STATUS_RESPONSES)
async def status(
    runtime: RuntimeDep, request_id: RequestIdQuery, referrer: ReferrerQuery = None
) -> Response:
    return json_answer(await _status(runtime, request_id))
