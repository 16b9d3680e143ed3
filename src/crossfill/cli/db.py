"""`crossfill db`: the database schema, and long-expired quotes pruned."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Annotated

import typer

from crossfill.cli.console import console
from crossfill.cli.environment import command_settings
from crossfill.settings import Settings

app = typer.Typer(help="Database schema and retention.")


@app.command("upgrade")
def upgrade_schema(revision: str = "head") -> None:
    """Apply migrations up to REVISION."""
    from crossfill.store.migrate import upgrade

    settings = command_settings()
    upgrade(settings.database, revision)
    console.print(f"database at {revision}")


@app.command("prune-quotes")
def prune_quotes(
    expired_days: Annotated[
        float,
        typer.Option(min=1, help="Prune quotes expired at least this many days ago."),
    ] = 7,
    dry_run: Annotated[bool, typer.Option(help="Only count what would be pruned.")] = False,
) -> None:
    """Delete quotes nobody deposited for, long expired (docs/deployment-file.md#retention)."""
    settings = command_settings()
    expired_before = datetime.now(UTC) - timedelta(days=expired_days)
    count = asyncio.run(_prune_quotes(settings, expired_before, dry_run=dry_run))
    verb = "would prune" if dry_run else "pruned"
    console.print(f"{verb} {count} quotes expired before {expired_before:%Y-%m-%d %H:%M} UTC")


async def _prune_quotes(settings: Settings, expired_before: datetime, *, dry_run: bool) -> int:
    from crossfill.store import retention
    from crossfill.store.db import create_engine, session_factory
    from crossfill.store.migrate import upgrade_async

    await upgrade_async(settings.database)
    engine = create_engine(settings.database)
    try:
        sessions = session_factory(engine)
        if dry_run:
            return await retention.count_prunable(sessions, expired_before)
        return await retention.prune_expired_quotes(sessions, expired_before)
    finally:
        await engine.dispose()
