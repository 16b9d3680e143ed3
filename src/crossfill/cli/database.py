"""The database a command reads or writes, migrated first."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.settings import Settings


@contextlib.asynccontextmanager
async def migrated_session(settings: Settings) -> AsyncIterator[AsyncSession]:
    from crossfill.store.db import create_engine, session_factory
    from crossfill.store.migrate import upgrade_async

    await upgrade_async(settings.database)
    engine = create_engine(settings.database)
    try:
        async with session_factory(engine)() as session:
            yield session
    finally:
        await engine.dispose()
