"""GET /metrics: the Prometheus exposition (series in `crossfill.metrics`, docs/metrics.md).

Open unless `CROSSFILL_METRICS_TOKEN` is set; then `Authorization: Bearer <token>`, wrong
tokens counted like the operator token's. Not rate limited: scrapers call it on a schedule.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import structlog
from fastapi import APIRouter, Depends, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST

from crossfill.api.auth import require_bearer
from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.domain.status import RequestStatus
from crossfill.runtime import Runtime
from crossfill.store import deposits, requests
from crossfill.store.db import DATABASE_FAILURES

log = structlog.get_logger(__name__)
router = APIRouter(tags=["metrics"])


@dataclass(frozen=True)
class StoreCounts:
    requests_by_status: dict[str, int]
    kept_deposits: dict[tuple[int, str], int]


class RequestCounts:
    """The store's requests by status and kept deposits, read at most once a second per
    process: scrapes are unlimited, so a flood of them must not become a flood of queries."""

    FRESH_SECONDS = 1.0

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._read: tuple[float, StoreCounts] | None = None

    async def counts(self, runtime: Runtime) -> StoreCounts | None:
        """Every status with its count (0 for none); None while the database is away."""
        async with self._lock:
            now = time.monotonic()
            if self._read is None or now - self._read[0] > self.FRESH_SECONDS:
                try:
                    async with runtime.sessions() as session:
                        found = await requests.count_by_status(session)
                        kept = await deposits.kept_counts(session)
                except DATABASE_FAILURES as exc:
                    # The other series are still worth a scrape; these go missing.
                    log.warning("store counts not read", error=str(exc))
                    return None
                by_status = {str(status): found.get(status, 0) for status in RequestStatus}
                self._read = (now, StoreCounts(by_status, kept))
            return self._read[1]


async def _scraper(request: Request, runtime: RuntimeDep) -> None:
    token = runtime.settings.metrics_token
    if token:
        await require_bearer(
            request, runtime, token, "Metrics need Authorization: Bearer <metrics token>"
        )


_TEXT = {"description": "Prometheus text exposition", "content": {CONTENT_TYPE_LATEST: {}}}


@router.get(
    "/metrics",
    response_class=Response,
    responses={**responses(None, 401, 429), 200: _TEXT},
    dependencies=[Depends(_scraper)],
)
async def metrics(request: Request, runtime: RuntimeDep) -> Response:
    """The service's Prometheus series; with several processes, see docs/metrics.md."""
    counts: RequestCounts = request.app.state.request_counts
    read = await counts.counts(runtime)
    body = (
        runtime.metrics.exposition(None)
        if read is None
        else runtime.metrics.exposition(read.requests_by_status, read.kept_deposits)
    )
    return Response(body, media_type=CONTENT_TYPE_LATEST)
