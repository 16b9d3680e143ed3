"""A quote's rows stored before it is answered, whatever kind of route it crosses: an answered
quote always has its request, so the deposit it leads to is never an order nobody knows."""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from crossfill.errors import StoreError
from crossfill.log_throttle import LogThrottle
from crossfill.quoting.errors import QuoteUnavailable
from crossfill.runtime import Runtime
from crossfill.store.group_commit import Row

log = structlog.get_logger(__name__)
# While the database refuses rows, every quote fails alike: one entry a second says so.
_NOT_STORED_LOG = LogThrottle()


async def store_quote(runtime: Runtime, rows: Sequence[Row], *, request_id: str) -> None:
    """Return once `rows` are committed (with other quotes' rows: `store.group_commit`); a
    store failure is a 503 the client may retry, as nothing was promised yet."""
    try:
        await runtime.quote_rows.add(rows)
    except StoreError as exc:
        held_back = _NOT_STORED_LOG.let_through("quote not stored")
        if held_back is not None:
            log.error(
                "quote not stored",
                request_id=request_id,
                error=str(exc),
                like_it_since_last_entry=held_back,
            )
        raise QuoteUnavailable(
            "SERVICE_UNAVAILABLE", "the quote could not be stored; try again"
        ) from None
