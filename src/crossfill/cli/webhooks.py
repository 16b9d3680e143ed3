"""`crossfill webhooks`: each API key's webhook endpoint and its failed deliveries."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from crossfill.cli.console import console
from crossfill.cli.database import migrated_session
from crossfill.cli.environment import command_settings
from crossfill.cli.options import KeyReference
from crossfill.errors import CrossfillError

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

app = typer.Typer(help="Each API key's webhook endpoint and its deliveries.")
T = TypeVar("T")


@app.command("set")
def set_endpoint(
    api_key: Annotated[str, typer.Argument(help="The API key itself: it signs deliveries")],
    url: str,
    header: Annotated[list[str] | None, typer.Option(help="Extra header NAME=VALUE")] = None,
) -> None:
    """Send this key's status events to URL (replaces any earlier endpoint)."""
    from crossfill.webhooks import config

    settings = command_settings()

    async def _set() -> int:
        async with migrated_session(settings) as session, session.begin():
            headers = config.parse_headers(header or [])
            configured = await config.set_endpoint(session, settings, api_key, url, headers)
            return configured.key.id

    console.print(f"API key {_run_webhook_config(_set())}: webhook set to {url}")


@app.command("show")
def show(key: KeyReference) -> None:
    """The key's endpoint, its headers (names only) and delivery counts."""
    from crossfill.store import webhook_endpoints

    async def _show(session: AsyncSession, key_id: int) -> str:
        endpoint = await webhook_endpoints.get(session, key_id)
        if endpoint is None:
            return f"API key {key_id}: no webhook"
        names = ", ".join(sorted(endpoint.headers)) or "none"
        return f"API key {key_id}: {endpoint.url} (extra headers: {names})"

    console.print(_on_key(key, _show))


@app.command("remove")
def remove(
    key: KeyReference,
) -> None:
    """Stop sending this key's events (pending ones are then skipped)."""
    from crossfill.store import webhook_endpoints

    async def _remove(session: AsyncSession, key_id: int) -> str:
        removed = await webhook_endpoints.remove(session, key_id)
        return f"API key {key_id}: webhook {'removed' if removed else 'was not set'}"

    console.print(_on_key(key, _remove))


@app.command("replay")
def replay(
    key: KeyReference,
) -> None:
    """Send this key's failed deliveries again, in order, with fresh retries."""
    from crossfill.webhooks import config

    async def _replay(session: AsyncSession, key_id: int) -> int:
        return await config.replay_failed(session, key_id, now=datetime.now(UTC))

    console.print(f"{_on_key(key, _replay)} failed deliveries queued again")


def _on_key(key: str, work: Callable[[AsyncSession, int], Awaitable[T]]) -> T:
    """`work` on the API key `key` names (given its id), in one transaction on the migrated
    database."""
    from crossfill.webhooks import config

    settings = command_settings()

    async def _work() -> T:
        async with migrated_session(settings) as session, session.begin():
            found = await config.find_key(session, key)
            return await work(session, found.id)

    return _run_webhook_config(_work())


def _run_webhook_config(work: Coroutine[Any, Any, T]) -> T:
    from crossfill.webhooks.config import WebhookConfigError

    try:
        return asyncio.run(work)
    except WebhookConfigError as exc:
        raise CrossfillError(str(exc)) from exc
