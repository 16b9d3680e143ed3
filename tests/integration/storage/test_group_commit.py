"""Group commit on both backends: concurrent rows share transactions, every caller returns only
once its row is committed, and one bad row fails only its own caller."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
import threading
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Any

import aiosqlite
import pytest
from sqlalchemy import func, select, text
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.errors import StoreError
from crossfill.store.bulk_insert import SqliteBulkInsert
from crossfill.store.db import as_utc, create_engine, session_factory
from crossfill.store.group_commit import GroupCommit, Row
from crossfill.store.requests import APP_FEES, REQUESTS
from crossfill.store.tables import ApiKey, AppFee, Base, Request
from tests.integration.storage.request_rows import ADDRESS, request_row

API_KEYS = Base.metadata.tables[ApiKey.__tablename__]


def _key(index: int, *, key_hash: str | None = None) -> list[Row]:
    values = {
        "name": f"key {index}",
        "prefix": "cfk_test",
        "key_hash": key_hash or f"{index:064x}",
        "created_at": datetime.now(UTC),
    }
    return [(API_KEYS, values)]


def _request_with_fee(index: int) -> list[Row]:
    """A request and one app-fee share, the child listed first."""
    now = datetime.now(UTC)
    request_id = f"0x{index:064x}"
    request = request_row(index, now)
    fee = {
        "request_id": request_id,
        "recipient": ADDRESS,
        "chain_id": 1,
        "currency": ADDRESS,
        "bps": 10,
        "quoted_amount": "1",
        "amount_usd_micros": 1,
        "state": "quoted",
        "updated_at": now,
    }
    return [(APP_FEES, fee), (REQUESTS, request)]


async def _stored_names(engine: AsyncEngine) -> set[str]:
    async with session_factory(engine)() as session:
        return set(await session.scalars(select(ApiKey.name)))


async def _transactions_holding_keys(engine: AsyncEngine, writer: GroupCommit) -> int:
    if engine.dialect.name == "postgresql":  # rows written by one transaction share its xmin
        async with engine.connect() as connection:
            found = await connection.scalar(text("SELECT count(DISTINCT xmin::text) FROM api_keys"))
        return int(found or 0)
    return writer.commits


@pytest.fixture
async def writer(engine: AsyncEngine) -> AsyncIterator[GroupCommit]:
    writer = GroupCommit(engine)
    try:
        yield writer
    finally:
        await writer.close()


async def test_concurrent_rows_share_a_transaction_and_are_committed_on_return(
    engine: AsyncEngine, writer: GroupCommit
) -> None:
    seen_on_return: list[bool] = []

    async def add_and_check(index: int) -> None:
        await writer.add(_key(index))
        async with session_factory(engine)() as session:
            found = await session.scalar(select(func.count()).where(ApiKey.name == f"key {index}"))
        seen_on_return.append(found == 1)

    await asyncio.gather(*(add_and_check(index) for index in range(30)))

    assert await _stored_names(engine) == {f"key {index}" for index in range(30)}
    assert seen_on_return == [True] * 30
    assert 1 <= await _transactions_holding_keys(engine, writer) < 30


async def test_a_failing_row_fails_only_its_own_caller(
    engine: AsyncEngine, writer: GroupCommit
) -> None:
    await writer.add(_key(0, key_hash="taken".rjust(64, "0")))

    results = await asyncio.gather(
        writer.add(_key(1)),
        writer.add(_key(2, key_hash="taken".rjust(64, "0"))),  # unique key_hash already stored
        writer.add(_key(3)),
        return_exceptions=True,
    )

    assert results[0] is None and results[2] is None
    assert isinstance(results[1], StoreError) and "key_hash" in str(results[1])
    assert await _stored_names(engine) == {"key 0", "key 1", "key 3"}


async def test_parents_are_inserted_before_their_children(
    engine: AsyncEngine, writer: GroupCommit
) -> None:
    await asyncio.gather(*(writer.add(_request_with_fee(index)) for index in range(5)))
    async with session_factory(engine)() as session:
        fees = set(await session.scalars(select(AppFee.request_id)))
    assert fees == {f"0x{index:064x}" for index in range(5)}


async def test_stored_values_read_back_as_written(engine: AsyncEngine, writer: GroupCommit) -> None:
    rows = _request_with_fee(7)
    request_values = next(values for table, values in rows if table is REQUESTS)
    await writer.add(rows)
    async with session_factory(engine)() as session:
        stored = await session.get(Request, request_values["id"])
        assert stored is not None
        for column, value in request_values.items():
            read = getattr(stored, column)
            assert (as_utc(read) if isinstance(read, datetime) else read) == value, column
        assert stored.request_type == "Bridge"  # left out: the column's default
        assert stored.plan is None and stored.referrer is None


async def test_rows_of_one_table_giving_different_columns_share_a_batch(
    engine: AsyncEngine, writer: GroupCommit
) -> None:
    sponsored = dict(_key(2)[0][1], sponsor_address=ADDRESS, sponsor_chain_id=1)
    await asyncio.gather(writer.add(_key(1)), writer.add([(API_KEYS, sponsored)]))
    async with session_factory(engine)() as session:
        keys = {key.name: key for key in await session.scalars(select(ApiKey))}
    assert keys["key 1"].sponsor_address is None
    assert (keys["key 2"].sponsor_address, keys["key 2"].sponsor_chain_id) == (ADDRESS, 1)


async def test_rows_added_while_a_batch_commits_go_into_the_next(
    engine: AsyncEngine, writer: GroupCommit
) -> None:
    first = asyncio.create_task(writer.add(_key(1)))
    await asyncio.sleep(0)  # the writer has taken the first batch
    later = [asyncio.create_task(writer.add(_key(index))) for index in range(2, 6)]
    await asyncio.gather(first, *later)
    assert await _stored_names(engine) == {f"key {index}" for index in range(1, 6)}


async def test_a_cancelled_caller_leaves_the_batch_and_the_other_callers_alone(
    engine: AsyncEngine, writer: GroupCommit
) -> None:
    first = asyncio.create_task(writer.add(_key(1)))
    await asyncio.sleep(0)  # the writer has taken the first batch
    cancelled = asyncio.create_task(writer.add(_key(2)))
    others = [asyncio.create_task(writer.add(_key(index))) for index in range(3, 6)]
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.gather(first, *others)
    assert cancelled.cancelled()
    # Its rows were in the batch already: stored, as a quote nobody was told about.
    assert await _stored_names(engine) == {f"key {index}" for index in range(1, 6)}


@pytest.mark.postgres
async def test_a_lost_connection_is_replaced_without_failing_the_caller(
    postgres_engine: AsyncEngine,
) -> None:
    engine = postgres_engine
    writer = GroupCommit(engine)
    await writer.add(_key(1))
    async with engine.connect() as admin:  # as a server restart would: the writer's backend ends
        await admin.execute(
            text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        )
    await writer.add(_key(2))
    await writer.close()
    assert await _stored_names(engine) == {"key 1", "key 2"}


@pytest.mark.parametrize("rows", [1, 3])
async def test_an_unreachable_database_fails_every_caller(rows: int, tmp_path) -> None:
    missing = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'no-such-dir' / 'x.db'}")
    writer = GroupCommit(missing)
    try:
        results = await asyncio.gather(
            *(writer.add(_key(index)) for index in range(rows)), return_exceptions=True
        )
    finally:
        await missing.dispose()
    assert all(isinstance(result, Exception) for result in results)


@pytest.mark.postgres
async def test_a_quote_document_is_compressed_with_lz4_where_the_server_offers_it(
    postgres_engine: AsyncEngine,
) -> None:
    """pglz was most of PostgreSQL's CPU per stored quote (migration 0023)."""
    engine = postgres_engine
    rows = _request_with_fee(1)
    table, request = rows[1]
    steps = [{"kind": "transaction", "data": f"0x{index:0>400x}"} for index in range(20)]
    rows[1] = (table, {**request, "quote": {"steps": steps}})
    writer = GroupCommit(engine)
    await writer.add(rows)
    await writer.close()
    async with engine.connect() as connection:
        offered = await connection.scalar(
            text(
                "SELECT 'lz4' = ANY(enumvals) FROM pg_settings "
                "WHERE name = 'default_toast_compression'"
            )
        )
        compression = await connection.scalar(
            text("SELECT pg_column_compression(quote) FROM requests")
        )
    assert compression == ("lz4" if offered else "pglz")


class _EndlessCallers(SqliteBulkInsert):
    """Each batch it builds brings one more caller's rows into the writer's queue, as a loaded
    API process would while the batch commits: the queue never runs dry."""

    def __init__(self, writer: GroupCommit, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(writer.engine.dialect)
        self.pending = writer._pending
        self.loop = loop
        self.flowing = True
        self.indexes = itertools.count(1000)

    def statements(self, rows: Sequence[Row]) -> list[tuple[str, list[tuple[Any, ...]]]]:
        if self.flowing:
            self.pending.append((_key(next(self.indexes)), self.loop.create_future()))
        return super().statements(rows)


async def test_other_work_gets_the_connection_while_callers_keep_adding_rows(
    sqlite_engine: AsyncEngine,
) -> None:
    """On SQLite the writer commits batch after batch on the pool's only connection; a queue
    that never runs dry must not keep the rest of the service off it."""
    writer = GroupCommit(sqlite_engine)
    endless = _EndlessCallers(writer, asyncio.get_running_loop())
    writer._sqlite_insert = endless
    first = asyncio.create_task(writer.add(_key(0)))
    await asyncio.sleep(0)  # the writer has the connection

    async def read() -> int:
        async with session_factory(sqlite_engine)() as session:
            return int(await session.scalar(select(func.count()).select_from(ApiKey)) or 0)

    try:
        seen = await asyncio.wait_for(read(), 60)
    finally:
        endless.flowing = False
    await first
    assert writer._writer is not None
    await asyncio.wait_for(writer._writer, 60)  # the last callers it brought in, stored
    assert seen >= 1
    assert "key 0" in await _stored_names(sqlite_engine)


@pytest.fixture
def thread_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the calls run on aiosqlite's thread."""
    calls: list[str] = []
    run_on_thread = aiosqlite.Connection._execute

    async def spied(self: aiosqlite.Connection, fn: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(getattr(fn, "__qualname__", repr(fn)))
        return await run_on_thread(self, fn, *args, **kwargs)  # type: ignore[no-untyped-call]

    monkeypatch.setattr(aiosqlite.Connection, "_execute", spied)
    return calls


async def test_a_batch_is_committed_on_the_event_loop_when_nothing_has_to_wait(
    sqlite_engine: AsyncEngine, thread_calls: list[str]
) -> None:
    writer = GroupCommit(sqlite_engine)
    await asyncio.gather(*(writer.add(_key(index)) for index in range(5)))
    assert await _stored_names(sqlite_engine) == {f"key {index}" for index in range(5)}
    assert writer.commits >= 1
    assert not [call for call in thread_calls if "_SqliteBatches" in call]


async def test_a_write_lock_held_elsewhere_is_waited_for_off_the_event_loop(
    sqlite_engine: AsyncEngine, thread_calls: list[str]
) -> None:
    """Another connection holding SQLite's write lock (a second process on the same file)
    must not stall the event loop: the loop tries for the lock once without a busy timeout,
    and the batch then waits for it on aiosqlite's thread. Here a coroutine on the same loop
    releases the lock."""
    on_the_loop: list[str] = []
    async with sqlite_engine.connect() as connection:
        raw = await connection.get_raw_connection()
        driver = raw.driver_connection
        assert isinstance(driver, aiosqlite.Connection)
        loop_thread = threading.current_thread()

        def traced(statement: str) -> None:
            if threading.current_thread() is loop_thread:
                on_the_loop.append(statement.split(" (")[0])

        await driver._execute(driver._conn.set_trace_callback, traced)  # type: ignore[no-untyped-call]
    writer = GroupCommit(sqlite_engine)
    other = sqlite3.connect(str(sqlite_engine.url.database), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute(
        "INSERT INTO api_keys (name, prefix, key_hash, created_at) VALUES (?, ?, ?, ?)",
        ("held", "cfk_test", "h".rjust(64, "0"), datetime.now(UTC).isoformat()),
    )
    adding = asyncio.create_task(writer.add(_key(1)))
    try:
        await asyncio.sleep(0.3)
        assert not adding.done()
        other.commit()
        await asyncio.wait_for(adding, 30)
    finally:
        other.close()
    assert await _stored_names(sqlite_engine) == {"held", "key 1"}
    assert writer.commits == 1
    assert [call for call in thread_calls if "_SqliteBatches" in call] == ["_SqliteBatches.store"]
    tried = on_the_loop.index("BEGIN IMMEDIATE")
    assert on_the_loop[tried - 1] == "PRAGMA busy_timeout=0"
    assert not [statement for statement in on_the_loop if statement.startswith("INSERT")]
