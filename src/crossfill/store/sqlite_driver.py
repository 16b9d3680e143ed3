"""SQLAlchemy's aiosqlite adapter, with each statement one call on aiosqlite's thread.

sqlite3 objects must only be used on aiosqlite's thread, and every call there is a round trip
from the event loop: the call queued to the thread, and its answer queued back to the loop,
which runs it when its other work lets it. SQLAlchemy's adapter makes three or four of them per
statement (open a cursor, execute, fetch the rows, close the cursor): 0.5 to 0.7 ms a statement on
a quiet machine, and much more when the loop is busy with other workers. A deposit's
transaction is about fifteen statements between a new head and its fill's broadcast.

Here a statement is one call: the cursor opened, the statement executed, its rows fetched and
the cursor closed, and what SQLAlchemy reads of a cursor afterwards (`description`,
`rowcount`, `lastrowid`, the rows) handed back as one value. Nothing else changes: the same
connection, the same transactions (sqlite3 begins one before the first write, SQLAlchemy
commits or rolls back), the same errors.

And that call is made on the event loop itself, not on aiosqlite's thread, when it need not
wait: a statement of this process's one connection is tens of microseconds of SQLite's work
(in WAL mode with `synchronous=NORMAL` nothing is synced), less than the hand-off to the
thread and back, which also passes Python's GIL between the two threads (in a burst of
deposits a seventh of the event loop's time went to handing statements over). Run on the
loop, a statement never waits for a lock: should another connection hold the write lock (a
command run beside the service, a second process by mistake), it fails at once and is run
again on aiosqlite's thread, where it waits out the busy timeout as before. A statement that
once took more than `INLINE_LIMIT_SECONDS` of the loop's CPU (a large listing, a retention
pass) runs on the thread from then on, so the loop is never held long.
"""

from __future__ import annotations

import sqlite3
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import aiosqlite
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
    AsyncAdapt_aiosqlite_dbapi,
)

# How long a statement waits for another connection's write lock before failing as busy (on
# aiosqlite's thread; on the event loop it does not wait).
BUSY_TIMEOUT_MS = 5000
# A statement that took more of the event loop's CPU than this runs on aiosqlite's thread after
# (its CPU, not the time it took: a loaded machine's stall in a short statement does not count).
INLINE_LIMIT_SECONDS = 0.005
# Statements (their SQL) that took longer than INLINE_LIMIT_SECONDS on the event loop once.
_slow: set[str] = set()


@contextmanager
def not_waiting(connection: sqlite3.Connection) -> Iterator[None]:
    """The connection's statements fail at once as busy, rather than wait, while another
    connection holds the write lock (for statements made on the event loop)."""
    connection.execute("PRAGMA busy_timeout=0")
    try:
        yield
    finally:
        connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


def is_busy(error: sqlite3.Error) -> bool:
    """SQLite refused for a lock another connection holds."""
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and code & 0xFF == sqlite3.SQLITE_BUSY


@dataclass(frozen=True, slots=True)
class _Executed:
    """A statement's cursor as SQLAlchemy reads it once it has run (closed already)."""

    description: Any
    rowcount: int
    lastrowid: int | None
    arraysize: int = 1

    def close(self) -> None:
        """Closed on aiosqlite's thread when the statement ran."""


_NOT_RUN = _Executed(description=None, rowcount=-1, lastrowid=None)


def _execute(
    connection: sqlite3.Connection, operation: str, parameters: Any
) -> tuple[_Executed, list[Any]]:
    """On aiosqlite's thread: the statement run and its rows fetched, its cursor closed."""
    cursor = connection.cursor()
    try:
        if parameters is None:
            cursor.execute(operation)
        else:
            cursor.execute(operation, parameters)
        rows = cursor.fetchall() if cursor.description else []
        return _Executed(cursor.description, cursor.rowcount, cursor.lastrowid), rows
    finally:
        cursor.close()


_Outcome = TypeVar("_Outcome")


def _on_the_loop(
    call: Callable[[sqlite3.Connection, str, Any], _Outcome],
    connection: sqlite3.Connection,
    operation: str,
    parameters: Any,
) -> _Outcome | None:
    """`call` of the statement made on the event loop, if it may be: None when it must go to
    aiosqlite's thread (known to be slow, or busy with another connection's lock, nothing
    done)."""
    if operation in _slow:
        return None
    started = time.thread_time()
    try:
        with not_waiting(connection):
            outcome = call(connection, operation, parameters)
    except sqlite3.OperationalError as error:
        if is_busy(error):
            return None
        raise
    if time.thread_time() - started > INLINE_LIMIT_SECONDS:
        _slow.add(operation)
    return outcome


def _executemany(connection: sqlite3.Connection, operation: str, parameters: Any) -> _Executed:
    """On aiosqlite's thread: the statement run for each parameter set, its cursor closed."""
    cursor = connection.cursor()
    try:
        cursor.executemany(operation, parameters)
        return _Executed(cursor.description, cursor.rowcount, cursor.lastrowid)
    finally:
        cursor.close()


class _OneCallCursor(AsyncAdapt_aiosqlite_cursor):
    """A cursor whose statements are one call each on aiosqlite's thread; between them it
    holds the last statement's outcome, not a driver cursor."""

    __slots__ = ()
    # Its driver cursor was closed on the thread: closing here is a no-op, never a round trip.
    _awaitable_cursor_close = False

    def _make_new_cursor(self, connection: Any) -> Any:
        return _NOT_RUN

    def _aenter_cursor(self, cursor: Any) -> Any:
        return cursor

    async def _execute_async(self, operation: Any, parameters: Any) -> Any:
        driver: aiosqlite.Connection = self._connection  # type: ignore[assignment]
        async with self._adapt_connection._execute_mutex:
            outcome = _on_the_loop(_execute, driver._conn, operation, parameters)
            if outcome is None:
                # aiosqlite's own way of running a call on its thread (what each of its
                # methods does), as the quotes' group commit does.
                outcome = await driver._execute(  # type: ignore[no-untyped-call]
                    _execute, driver._conn, operation, parameters
                )
        executed, rows = outcome
        self._cursor = cast(Any, executed)
        self._rows = deque(rows)

    async def _executemany_async(self, operation: Any, seq_of_parameters: Any) -> Any:
        driver: aiosqlite.Connection = self._connection  # type: ignore[assignment]
        seq_of_parameters = list(seq_of_parameters)  # tried on the loop, perhaps again after
        async with self._adapt_connection._execute_mutex:
            executed = _on_the_loop(_executemany, driver._conn, operation, seq_of_parameters)
            if executed is None:
                executed = await driver._execute(  # type: ignore[no-untyped-call]
                    _executemany, driver._conn, operation, seq_of_parameters
                )
        self._cursor = cast(Any, executed)


class _OneCallConnection(AsyncAdapt_aiosqlite_connection):
    """Statements one call each, on the event loop when they need not wait; commits and
    rollbacks there too (in WAL mode neither waits for another connection, nor syncs)."""

    __slots__ = ()
    _cursor_cls = _OneCallCursor

    def commit(self) -> None:
        self._ended(sqlite3.Connection.commit, super().commit)

    def rollback(self) -> None:
        self._ended(sqlite3.Connection.rollback, super().rollback)

    def _ended(
        self, on_the_loop: Callable[[sqlite3.Connection], None], on_the_thread: Callable[[], None]
    ) -> None:
        """The transaction ended on the event loop; should SQLite answer busy, on aiosqlite's
        thread, as SQLAlchemy's adapter does."""
        driver: aiosqlite.Connection = self._connection  # type: ignore[assignment]
        if driver._connection is None:
            return  # closed: as the adapter, nothing to end
        try:
            on_the_loop(driver._conn)
        except sqlite3.OperationalError as error:
            if not is_busy(error):
                self._handle_exception(error)
            on_the_thread()


class OneCallDbapi(AsyncAdapt_aiosqlite_dbapi):
    """The aiosqlite adapter's module, handing out connections with one-call cursors (pass it
    as `create_async_engine(..., module=OneCallDbapi())`)."""

    def __init__(self) -> None:
        super().__init__(aiosqlite, sqlite3)

    def connect(self, *arg: Any, **kw: Any) -> _OneCallConnection:
        adapted = super().connect(*arg, **kw)
        return _OneCallConnection(self, adapted._connection)
