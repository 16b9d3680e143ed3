"""Run the API (and the chain followers) under uvicorn until asked to stop."""

from __future__ import annotations

import uvicorn

from crossfill.api.app import create_app
from crossfill.runtime import Runtime
from crossfill.settings import Settings
from crossfill.store.migrate import upgrade_async


async def serve(settings: Settings, *, port: int | None = None) -> None:
    """Migrate the database, then serve until SIGINT/SIGTERM."""
    await upgrade_async(settings.database)
    runtime = Runtime.build(settings)
    app = create_app(runtime, run_workers=True)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port if port is None else port,
        log_level=settings.log_level.lower(),
        access_log=False,
        lifespan="on",
    )
    await uvicorn.Server(config).serve()
