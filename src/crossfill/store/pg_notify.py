"""PostgreSQL LISTEN/NOTIFY between processes. Best effort: what is sent this way is also found
by a poll or a scan, so a lost notification (or a server without them) only delays it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import asyncpg
import structlog
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.domain.backoff import Backoff

log = structlog.get_logger(__name__)


def _asyncpg_dsn(database_url: str) -> str | None:
    if not database_url.startswith("postgresql"):
        return None
    return database_url.replace("postgresql+asyncpg://", "postgresql://", 1)


# A LISTEN connection's attempt to connect waits this long: the server may be cut off.
CONNECT_TIMEOUT_SECONDS = 5.0


async def listen(
    database_url: str,
    channel: str,
    on_payload: Callable[[str], None],
    *,
    backoff: Backoff | None = None,
) -> None:
    """Call `on_payload` for each notification on `channel` until cancelled (returns at once on
    SQLite). A connection the server ends (a restart, a failover) is opened again, backing off
    while it cannot be; notifications sent meanwhile are lost, as the module says they may
    be."""
    dsn = _asyncpg_dsn(database_url)
    if dsn is None:
        return
    backoff = backoff or Backoff()
    while True:
        try:
            await _listen_on_one_connection(dsn, channel, on_payload, backoff)
        except _FAILURES as exc:
            delay = backoff.failed()
            if backoff.worth_logging:
                log.warning(
                    "listen_unavailable",
                    channel=channel,
                    error=f"{type(exc).__name__}: {exc}",
                    retry_in_seconds=round(delay, 2),
                )
            await asyncio.sleep(delay)


async def _listen_on_one_connection(
    dsn: str, channel: str, on_payload: Callable[[str], None], backoff: Backoff
) -> None:
    """Listen until the server ends the connection."""
    connection = await asyncpg.connect(dsn, timeout=CONNECT_TIMEOUT_SECONDS)
    ended = asyncio.Event()
    try:
        connection.add_termination_listener(lambda _connection: ended.set())
        await connection.add_listener(channel, lambda *args: on_payload(str(args[-1])))
        if backoff.failures:
            log.info("listening again", channel=channel)
        backoff.succeeded()
        await ended.wait()
        log.warning("listen connection lost; connecting again", channel=channel)
    finally:
        connection.terminate()


_FAILURES = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError)


async def notify(engine: AsyncEngine, channel: str, payload: str) -> None:
    async with engine.connect() as connection:
        await connection.execute(
            text("SELECT pg_notify(:channel, :payload)"), {"channel": channel, "payload": payload}
        )
        await connection.commit()
