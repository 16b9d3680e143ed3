"""A request's transaction recorded mined keeps that status when its sender records it
pending afterwards (`keep_mined`: the indexer saw it mined before the sender's own commit);
without `keep_mined` the status given is the status kept."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

from crossfill.store import requests
from crossfill.store.migrate import upgrade_async
from crossfill.store.tables import RequestTransaction

NOW = datetime(2026, 11, 26, tzinfo=UTC)


@pytest.mark.parametrize(("keep_mined", "kept"), [(True, "success"), (False, "pending")])
async def test_a_late_pending_record_keeps_a_mined_status_when_asked(
    tmp_path: Path, keep_mined: bool, kept: str
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'records.db'}"
    await upgrade_async(url)
    # SQLite's own default, foreign keys unchecked: the transaction rows need no request.
    engine = create_async_engine(url)
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    try:
        async with sessions() as session, session.begin():
            await requests.record_transaction(
                session, "req", kind="deposit", chain_id=1, tx_hash="0xab", now=NOW,
                status="success", block_number=7,
            )  # fmt: skip
        async with sessions() as session, session.begin():
            await requests.record_transaction(
                session, "req", kind="deposit", chain_id=1, tx_hash="0xab", now=NOW,
                status="pending", keep_mined=keep_mined,
            )  # fmt: skip
        async with sessions() as session:
            row = await session.scalar(select(RequestTransaction))
        assert row is not None
        assert (row.status, row.block_number) == (kept, 7)
    finally:
        await engine.dispose()
