"""PostgreSQL LISTEN/NOTIFY between processes. Best effort: what is sent this way is also found
by a poll or a scan, so a lost notification (or a server without them) only delays it."""

from __future__ import annotations

from collections.abc import Callable

import asyncpg
import structlog
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

log = structlog.get_logger(__name__)


def _asyncpg_dsn(database_url: str) -> str | None:
    if not database_url.startswith("postgresql"):
        return None
    return database_url.replace("postgresql+asyncpg://", "postgresql://", 1)


async def listen(
    database_url: str, channel: str, on_payload: Callable[[str], None]
) -> asyncpg.Connection | None:
    """A connection calling `on_payload` for each notification on `channel` (close it when
    done); None on SQLite, or when PostgreSQL cannot be reached (logged)."""
    dsn = _asyncpg_dsn(database_url)
    if dsn is None:
        return None
    try:
        connection = await asyncpg.connect(dsn)
        await connection.add_listener(channel, lambda *args: on_payload(str(args[-1])))
    except (OSError, asyncpg.PostgresError) as exc:
        log.warning("listen_unavailable", channel=channel, error=str(exc))
        return None
    return connection


async def notify(engine: AsyncEngine, channel: str, payload: str) -> None:
    async with engine.connect() as connection:
        await connection.execute(
            text("SELECT pg_notify(:channel, :payload)"), {"channel": channel, "payload": payload}
        )
        await connection.commit()
