"""Alembic environment: runs migrations over the async engine of the configured URL."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from crossfill.store.db import create_engine, is_sqlite
from crossfill.store.tables import Base

target_metadata = Base.metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=is_sqlite(str(connection.engine.url)),
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    url = context.config.get_main_option("sqlalchemy.url")
    assert url is not None
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run)
            await connection.commit()
    finally:
        await engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported; give a database URL")
connection = context.config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    asyncio.run(_run_async())
