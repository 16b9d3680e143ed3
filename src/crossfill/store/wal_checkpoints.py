"""SQLite's WAL checkpoints on a thread of their own, off the commit path.

In WAL mode a commit appends pages to the write-ahead log, and a checkpoint copies them back
into the database file and syncs it (with `synchronous=NORMAL` nothing else is synced). SQLite
runs one itself inside whichever commit takes the log past `wal_autocheckpoint` pages, so under
a stream of quotes every few hundred rows one batch paid for copying the log and an fsync,
and the callers of that batch and of every batch queued behind it waited for it: a batch took
0.65 ms on aiosqlite's thread at the median and 2.5 ms on average.

Here a thread with its own connection checkpoints instead, `PASSIVE` (it neither waits for
nor blocks the writer and readers): every `BUSY_INTERVAL_SECONDS` while the log keeps
growing, every `QUIET_INTERVAL_SECONDS` once it stops. The service's own connections still
checkpoint by themselves past `BACKSTOP_PAGES` (see `store.db.create_engine`), should this
thread fall behind or stop.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import structlog
from sqlalchemy.engine import make_url

log = structlog.get_logger(__name__)

BUSY_INTERVAL_SECONDS = 0.1
QUIET_INTERVAL_SECONDS = 1.0
# About 40 MB of log with 4 KiB pages; SQLite's own default is 1,000 pages.
BACKSTOP_PAGES = 10_000


def sqlite_file(url: str) -> Path | None:
    """The database file of a SQLite URL; None for another database or an in-memory one."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


class WalCheckpoints:
    """The checkpointing thread for one database file: `start` it once the service is up,
    `stop` it before the engine is disposed."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        # Checkpoints that copied pages, for tests.
        self.copied = 0

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self._run, name="sqlite-wal-checkpoints", daemon=True
        )
        self._thread.start()

    async def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join)
            self._thread = None

    def _run(self) -> None:
        connection: sqlite3.Connection | None = None
        last: tuple[int, int] | None = None
        failure: str | None = None
        interval = QUIET_INTERVAL_SECONDS
        try:
            while not self._stopping.wait(interval):
                try:
                    if connection is None:  # the service created the file; never create one
                        connection = sqlite3.connect(f"file:{self.database}?mode=rw", uri=True)
                    logged, copied = _checkpoint(connection)
                except sqlite3.Error as exc:
                    if str(exc) != failure:  # once per distinct failure, not every second
                        log.warning("wal checkpoint failed", error=str(exc))
                    failure = str(exc)
                    if connection is not None:
                        connection.close()
                    connection, last, interval = None, None, QUIET_INTERVAL_SECONDS
                    continue
                failure = None
                grew, last = (logged, copied) != last, (logged, copied)
                if grew and copied:
                    self.copied += 1
                interval = BUSY_INTERVAL_SECONDS if grew else QUIET_INTERVAL_SECONDS
        finally:
            if connection is not None:
                connection.close()


def _checkpoint(connection: sqlite3.Connection) -> tuple[int, int]:
    """Pages in the log, and pages of it now in the database file."""
    _busy, logged, copied = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return int(logged), int(copied)
