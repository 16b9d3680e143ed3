"""SQLAlchemy's aiosqlite adapter, with each statement one call on aiosqlite's thread.

sqlite3 objects must only be used on aiosqlite's thread, and every call there is a round trip
from the event loop: the call queued to the thread, and its answer queued back to the loop,
which runs it when its other work lets it. SQLAlchemy's adapter makes three or four of them per
statement (open a cursor, execute, fetch the rows, close the cursor): 0.5 to 0.7 ms a statement on
a quiet machine, and much more when the loop is busy with other workers. A deposit's
transaction is about fifteen statements between a new head and its fill's broadcast.

Here a statement is one call: the cursor opened, the statement executed, its rows fetched and
the cursor closed on the thread, and what SQLAlchemy reads of a cursor afterwards
(`description`, `rowcount`, `lastrowid`, the rows) handed back as one value. Nothing else
changes: the same connection, the same transactions (sqlite3 begins one before the first write,
SQLAlchemy commits or rolls back), the same errors.
"""

from __future__ import annotations

import sqlite3
from collections import deque
from dataclasses import dataclass
from typing import Any

import aiosqlite
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
    AsyncAdapt_aiosqlite_dbapi,
)


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
            # aiosqlite's own way of running a call on its thread (what each of its methods
            # does), as the quotes' group commit does.
            executed, rows = await driver._execute(  # type: ignore[no-untyped-call]
                _execute, driver._conn, operation, parameters
            )
        self._cursor = executed
        self._rows = deque(rows)

    async def _executemany_async(self, operation: Any, seq_of_parameters: Any) -> Any:
        driver: aiosqlite.Connection = self._connection  # type: ignore[assignment]
        async with self._adapt_connection._execute_mutex:
            executed = await driver._execute(  # type: ignore[no-untyped-call]
                _executemany, driver._conn, operation, seq_of_parameters
            )
        self._cursor = executed


class _OneCallConnection(AsyncAdapt_aiosqlite_connection):
    __slots__ = ()
    _cursor_cls = _OneCallCursor


class OneCallDbapi(AsyncAdapt_aiosqlite_dbapi):
    """The aiosqlite adapter's module, handing out connections with one-call cursors (pass it
    as `create_async_engine(..., module=OneCallDbapi())`)."""

    def __init__(self) -> None:
        super().__init__(aiosqlite, sqlite3)

    def connect(self, *arg: Any, **kw: Any) -> _OneCallConnection:
        adapted = super().connect(*arg, **kw)
        return _OneCallConnection(self, adapted._connection)
