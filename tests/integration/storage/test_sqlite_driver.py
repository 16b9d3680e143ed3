"""SQLite statements on the event loop: made there when nothing has to wait, on aiosqlite's
thread when another connection holds the write lock (the loop never waits for it), and on
the thread from then on once one was slow."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import aiosqlite
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.store import sqlite_driver
from crossfill.store.db import session_factory

INSERT_KEY = text(
    "INSERT INTO api_keys (name, prefix, key_hash, created_at) "
    "VALUES (:name, 'cfk_test', :key_hash, :created_at)"
)


def _key(name: str) -> dict[str, str]:
    return {
        "name": name,
        "key_hash": name.rjust(64, "0"),
        "created_at": datetime.now(UTC).isoformat(),
    }


@pytest.fixture
def thread_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What ran on aiosqlite's thread: a statement's SQL, or a call's name (`commit`, ...);
    not a new connection's PRAGMAs."""
    calls: list[str] = []
    run_on_thread = aiosqlite.Connection._execute

    async def spied(self: aiosqlite.Connection, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if fn in (sqlite_driver._execute, sqlite_driver._executemany):
            if not args[1].startswith("PRAGMA"):
                calls.append(args[1])
        else:
            calls.append(getattr(fn, "__name__", repr(fn)))
        return await run_on_thread(self, fn, *args, **kwargs)  # type: ignore[no-untyped-call]

    monkeypatch.setattr(aiosqlite.Connection, "_execute", spied)
    return calls


@pytest.fixture
async def warm_engine(sqlite_engine: AsyncEngine) -> AsyncEngine:
    """The engine with its one pooled connection opened already (opening it is the thread's)."""
    async with session_factory(sqlite_engine)() as session:
        await session.execute(text("SELECT 1"))
    return sqlite_engine


@pytest.fixture(autouse=True)
def no_slow_statements() -> Iterator[None]:
    sqlite_driver._slow.clear()
    yield
    sqlite_driver._slow.clear()


async def _names(engine: AsyncEngine) -> set[str]:
    async with session_factory(engine)() as session:
        return set((await session.scalars(text("SELECT name FROM api_keys"))).all())


async def test_statements_and_commits_run_on_the_event_loop_when_nothing_has_to_wait(
    warm_engine: AsyncEngine, thread_calls: list[str]
) -> None:
    async with session_factory(warm_engine)() as session, session.begin():
        await session.execute(INSERT_KEY, _key("first"))
        await session.execute(INSERT_KEY, [_key("second"), _key("third")])
    with pytest.raises(RuntimeError, match="rolled back"):
        async with session_factory(warm_engine)() as session, session.begin():
            await session.execute(INSERT_KEY, _key("never"))
            raise RuntimeError("rolled back")
    assert await _names(warm_engine) == {"first", "second", "third"}
    assert thread_calls == []


async def test_a_write_lock_held_elsewhere_is_waited_for_on_the_thread_not_the_loop(
    warm_engine: AsyncEngine, thread_calls: list[str]
) -> None:
    """Another connection holds the write lock (a second process on the file): the write
    fails at once on the loop and waits on aiosqlite's thread, while the loop goes on; once
    the lock is free it is written, in the transaction it began in."""
    other = sqlite3.connect(str(warm_engine.url.database), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute(
        "INSERT INTO api_keys (name, prefix, key_hash, created_at) VALUES (?, ?, ?, ?)",
        ("held", "cfk_test", "h" * 64, datetime.now(UTC).isoformat()),
    )

    async def write() -> None:
        async with session_factory(warm_engine)() as session, session.begin():
            await session.execute(INSERT_KEY, _key("waited"))

    writing = asyncio.create_task(write())
    ticks = 0
    try:
        for _ in range(30):  # the loop turns while the write waits
            await asyncio.sleep(0.01)
            ticks += 1
        assert not writing.done()
        other.commit()
        await asyncio.wait_for(writing, 30)
    finally:
        other.close()
    assert ticks == 30
    assert await _names(warm_engine) == {"held", "waited"}
    assert [statement.split(" (")[0] for statement in thread_calls] == ["INSERT INTO api_keys"]


async def test_a_statement_once_slow_runs_on_the_thread_after(
    warm_engine: AsyncEngine,
    thread_calls: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sqlite_driver, "INLINE_LIMIT_SECONDS", 0.0)
    count = text("SELECT count(*) FROM api_keys")
    for _ in range(2):
        async with session_factory(warm_engine)() as session:
            assert (await session.execute(count)).scalar_one() == 0
    assert thread_calls == [count.text]


async def test_a_statement_that_fails_on_the_loop_fails_as_before(
    warm_engine: AsyncEngine, thread_calls: list[str]
) -> None:
    async with session_factory(warm_engine)() as session, session.begin():
        await session.execute(INSERT_KEY, _key("twice"))
    with pytest.raises(Exception, match="UNIQUE constraint failed"):
        async with session_factory(warm_engine)() as session, session.begin():
            await session.execute(INSERT_KEY, _key("twice"))
    assert thread_calls == []
    assert await _names(warm_engine) == {"twice"}
