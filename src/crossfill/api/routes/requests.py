"""GET /requests/v3 (API key required) and the deprecated GET /requests/v2."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request, Response

from crossfill.api.auth import AuthenticatedDep, CallerDep
from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import listing_parameters, responses
from crossfill.api.rate_limit import Limiter, budget, enforce
from crossfill.api.schemas.responses import RequestsV2
from crossfill.app.request_records import RecordShaping, facts_of
from crossfill.domain.deprecation import RETIRED_ON, SUCCESSOR, V2Schedule
from crossfill.domain.listing_query import ListingError, ListingQuery, parse_listing
from crossfill.domain.record_facts import RecordFacts
from crossfill.domain.request_record import v2_record, v3_record
from crossfill.errors import BadRequest, Gone
from crossfill.runtime import Runtime
from crossfill.store import listing
from crossfill.store.tables import Request as RequestRow

router = APIRouter(tags=["requests"])


def _query(request: Request, *, v2: bool) -> ListingQuery:
    params: dict[str, list[str]] = {}
    for name, value in request.query_params.multi_items():
        params.setdefault(name, []).append(value)
    try:
        return parse_listing(params, v2=v2)
    except ListingError as exc:
        raise BadRequest(str(exc)) from exc


async def _list(
    runtime: Runtime,
    query: ListingQuery,
    *,
    referrer: Callable[[RequestRow], str | None],
    record: Callable[[RecordFacts], dict[str, Any]],
) -> dict[str, Any]:
    """A page of requests matching `query`, each shaped by `record` (`referrer`: what a row
    shows as its referrer to this caller)."""
    shaping = RecordShaping.of(runtime.deployment)
    async with runtime.sessions() as session:
        rows, continuation = await listing.page(session, query)
        facts = await facts_of(session, rows, shaping, referrer=referrer)
        total = await listing.total(session, query) if query.include_total else None
    body: dict[str, Any] = {"requests": [record(one) for one in facts]}
    if continuation is not None:
        body["continuation"] = continuation
    if total is not None:
        body["total"] = total
    return body


@router.get(
    "/requests/v3",
    response_model=None,
    responses=responses("requests-v3", 400, 401, 429),
    openapi_extra={"parameters": listing_parameters(v2=False)},
)
async def requests_v3(
    request: Request, runtime: RuntimeDep, caller: AuthenticatedDep
) -> dict[str, Any]:
    """Requests matching every parameter, newest first by default, one keyset page at a time."""
    query = _query(request, v2=False)

    def referrer(row: RequestRow) -> str | None:
        own = query.include_authenticated_data and row.api_key_id == caller.key_id
        return row.referrer if own else None

    return await _list(runtime, query, referrer=referrer, record=v3_record)


@router.get(
    "/requests/v2",
    deprecated=True,
    response_model=None,
    responses=responses(RequestsV2, 400, 401, 410, 429),
    openapi_extra={"parameters": listing_parameters(v2=True)},
)
async def requests_v2(
    request: Request, response: Response, runtime: RuntimeDep, caller: CallerDep
) -> dict[str, Any]:
    """Deprecated: v2 records, reduced rate limits from Sep 1, 2026, gone from Nov 24, 2026."""
    now: datetime = request.app.state.wall_clock()
    schedule: V2Schedule = request.app.state.v2_schedule
    if schedule.retired(now):
        raise Gone(
            f"GET /requests/v2 was retired on {RETIRED_ON.isoformat()}; "
            f"use GET {SUCCESSOR} with an x-api-key header"
        )
    response.headers.update(schedule.headers(now))
    normal = budget(runtime.settings, caller)
    limiter: Limiter = request.app.state.limiter
    await enforce(
        limiter,
        f"v2:{caller.bucket}",
        max(1, int(normal * schedule.rate_share(now))) if normal else 0,
        f"GET /requests/v2 is deprecated and its rate limit is reduced; use {SUCCESSOR}",
    )
    query = _query(request, v2=True)

    def record(facts: RecordFacts) -> dict[str, Any]:
        return v2_record(facts, include_order_data=query.include_order_data)

    return await _list(runtime, query, referrer=lambda row: row.referrer, record=record)
