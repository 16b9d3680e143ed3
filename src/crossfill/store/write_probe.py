"""Whether the database takes a write now: what readiness needs beyond a read.

A full disk, a server turned read-only, a session that may only read: reads go on while
every quote fails to be stored. The probe rewrites one row and commits.

On SQLite the row is the size of a large quote's rows (a stored answer alone is about
8 kB): a small write fits in the space the write-ahead log already holds and succeeds while
a quote's insert fails for want of disk (seen on a full tmpfs: a 100-byte rewrite went
through, a 32 kB one failed with the quotes). On PostgreSQL the row is small: every write
there is also written to its log, shipped to replicas and archived, and a probe of 32 kB a
second (a flood of public probes) would be gigabytes a day of it; a server whose log cannot
be written stops altogether (the read fails too), and a read-only server or session fails
any write. A PostgreSQL whose data volume alone is full (its log elsewhere) may pass a
small rewrite while new rows fail: the quotes' own 503s show that case.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

import structlog
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.errors import StoreError
from crossfill.store.db import DATABASE_FAILURES
from crossfill.store.tables import WriteProbe

log = structlog.get_logger(__name__)

PROBE_ID = 1
# The payload's size by dialect; random, so that nothing compresses it.
PAYLOAD_BYTES = {"sqlite": 32 * 1024, "postgresql": 32}


async def probe_write(engine: AsyncEngine) -> None:
    """Rewrite the probe row and commit; StoreError (naming only the failure's kind: the
    answer is public) if the database refused. The driver's own message is logged."""
    dialect = engine.dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    values = {
        "id": PROBE_ID,
        "payload": os.urandom(PAYLOAD_BYTES[dialect] // 2).hex(),
        "written_at": datetime.now(UTC),
    }
    statement = insert(WriteProbe).values(values)
    upsert = statement.on_conflict_do_update(
        index_elements=[WriteProbe.id],
        set_={"payload": statement.excluded.payload, "written_at": statement.excluded.written_at},
    )
    try:
        async with engine.begin() as connection:
            await connection.execute(upsert)
    except DATABASE_FAILURES as exc:
        cause = getattr(exc, "orig", None) or exc
        log.warning(f"the database refused the write probe: {str(cause)[:300]}")
        raise StoreError(f"database refuses writes: {type(exc).__name__}") from exc
