"""SQLite's log checkpointed by a thread of its own: what commits append to the write-ahead
log reaches the database file without any commit checkpointing, and the service's connections
keep a backstop."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from crossfill.store import wal_checkpoints
from crossfill.store.db import create_engine
from crossfill.store.wal_checkpoints import WalCheckpoints, sqlite_file


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    """A WAL database whose writer never checkpoints by itself."""
    connection = sqlite3.connect(tmp_path / "crossfill.db")
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA wal_autocheckpoint=0")
    connection.execute("CREATE TABLE rows (body TEXT)")
    connection.commit()
    try:
        yield connection
    finally:
        connection.close()


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wal_checkpoints, "BUSY_INTERVAL_SECONDS", 0.01)
    monkeypatch.setattr(wal_checkpoints, "QUIET_INTERVAL_SECONDS", 0.01)


def _file_bytes(path: Path) -> int:
    """The database file's size: what checkpoints copied into it (commits write the log)."""
    return path.stat().st_size


def _commit_rows(connection: sqlite3.Connection, count: int) -> None:
    for _ in range(count):
        connection.execute("INSERT INTO rows VALUES (?)", ("x" * 7000,))
        connection.commit()


async def _until(condition: Callable[[], bool], what: str) -> None:
    """Another thread's work, seen from here: checked every 10 ms for up to 30 s."""
    for _ in range(3000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never: {what}")


@pytest.mark.usefixtures("quick")
async def test_the_log_reaches_the_database_file_without_a_commit_checkpointing(
    writer: sqlite3.Connection, tmp_path: Path
) -> None:
    database = tmp_path / "crossfill.db"
    _commit_rows(writer, 50)  # about 350 kB of rows, in the log only
    assert _file_bytes(database) < 50_000

    checkpoints = WalCheckpoints(database)
    checkpoints.start()
    try:
        await _until(lambda: _file_bytes(database) > 350_000, "the log copied")
        _commit_rows(writer, 50)  # more, while it runs
        await _until(lambda: _file_bytes(database) > 700_000, "the later rows copied")
    finally:
        await checkpoints.stop()
    assert checkpoints.copied >= 2


@pytest.mark.usefixtures("quick")
async def test_a_missing_database_is_never_created(tmp_path: Path) -> None:
    missing = tmp_path / "gone.db"
    checkpoints = WalCheckpoints(missing)
    checkpoints.start()
    await asyncio.sleep(0.1)
    await checkpoints.stop()
    assert not missing.exists()
    assert checkpoints.copied == 0


async def test_the_service_connections_keep_a_backstop(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'crossfill.db'}"
    for pages, expected in ((None, 1000), (wal_checkpoints.BACKSTOP_PAGES, 10_000)):
        engine = create_engine(url, autocheckpoint_pages=pages)
        try:
            async with engine.connect() as connection:
                found = await connection.scalar(text("PRAGMA wal_autocheckpoint"))
        finally:
            await engine.dispose()
        assert found == expected


def test_only_a_sqlite_file_is_checkpointed(tmp_path: Path) -> None:
    assert sqlite_file(f"sqlite+aiosqlite:///{tmp_path / 'x.db'}") == tmp_path / "x.db"
    assert sqlite_file("sqlite+aiosqlite:///:memory:") is None
    assert sqlite_file("postgresql+asyncpg://127.0.0.1/test") is None
