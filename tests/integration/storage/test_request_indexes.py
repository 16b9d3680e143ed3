"""The deposit-address sweeper's watch list, read at every new head, stays an index lookup
while the requests table grows faster than its statistics (PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.store import address_transfers
from crossfill.store.db import session_factory
from crossfill.store.group_commit import GroupCommit
from crossfill.store.requests import REQUESTS
from tests.integration.storage.request_rows import request_row

CHAIN = 1


@pytest.mark.postgres
async def test_the_watch_list_reads_only_requests_that_own_a_deposit_address(
    postgres_engine: AsyncEngine,
) -> None:
    engine = postgres_engine
    now = datetime.now(UTC)
    writer = GroupCommit(engine)
    # No ANALYZE since: the planner knows nothing of these rows, as after a busy spell.
    await writer.add([(REQUESTS, request_row(index, now)) for index in range(2000)])
    await writer.close()
    sent: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        sent.append((statement, parameters))

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        async with session_factory(engine)() as session:
            watched = await address_transfers.watched(
                session, CHAIN, since=now - timedelta(days=1), limit=100
            )
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)
    assert watched == {}
    [(statement, parameters)] = sent
    async with engine.connect() as connection:
        plan = await connection.exec_driver_sql(f"EXPLAIN {statement}", parameters)
        lines = [row[0] for row in plan]
    assert any("ix_requests_open_deposit_addresses" in line for line in lines), lines
