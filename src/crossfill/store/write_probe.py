"""Whether the database takes a write now: what readiness needs beyond a read.

A full disk, a server turned read-only, a tablespace out of room: reads go on while every
quote fails to be stored. The probe rewrites one row with a payload the size of a large
quote's rows (a stored answer alone is about 8 kB): on SQLite a small write fits in the
space the write-ahead log already holds and succeeds while a quote's insert fails for want
of disk (seen on a full tmpfs: a 100-byte rewrite went through, a 32 kB one failed with
the quotes). The payload is random, so PostgreSQL's TOAST cannot compress it away.
"""

from __future__ import annotations

import logging
import os
from datetime import UTC, datetime

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.errors import StoreError
from crossfill.store.db import DATABASE_FAILURES
from crossfill.store.tables import WriteProbe

log = logging.getLogger(__name__)

PROBE_ID = 1
PAYLOAD_BYTES = 32 * 1024


async def probe_write(engine: AsyncEngine) -> None:
    """Rewrite the probe row and commit; StoreError (naming only the failure's kind: the
    answer is public) if the database refused. The driver's own message is logged."""
    insert = postgresql.insert if engine.dialect.name == "postgresql" else sqlite.insert
    values = {
        "id": PROBE_ID,
        "payload": os.urandom(PAYLOAD_BYTES // 2).hex(),
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
        log.warning("the database refused the write probe: %s", str(cause)[:300])
        raise StoreError(f"database refuses writes: {type(exc).__name__}") from exc
