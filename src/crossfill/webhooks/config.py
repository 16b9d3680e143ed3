"""Setting an API key's webhook: check the URL, seal the key, store. Used by CLI and admin API."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.config.webhook_secret import SigningKeyBox
from crossfill.domain.webhook_url import check_endpoint
from crossfill.settings import Mode, Settings
from crossfill.store import api_keys, webhook_endpoints
from crossfill.store.tables import ApiKey, OutboxEvent, WebhookEndpoint
from crossfill.webhooks.destination import resolved_addresses
from crossfill.webhooks.headers import HeaderRefused, check_headers


class WebhookConfigError(ValueError):
    """The endpoint, a header or the key reference is not acceptable; says why."""


@dataclass(frozen=True)
class Configured:
    key: ApiKey
    endpoint: WebhookEndpoint


def parse_headers(pairs: list[str]) -> list[tuple[str, str]]:
    """`NAME=VALUE` options as (name, value) pairs; `set_endpoint` checks them."""
    headers = []
    for pair in pairs:
        name, separator, value = pair.partition("=")
        if not separator or not name.strip():
            raise WebhookConfigError(f"header {pair!r} must be NAME=VALUE")
        headers.append((name.strip(), value))
    return headers


async def set_endpoint(
    session: AsyncSession,
    settings: Settings,
    api_key: str,
    url: str,
    headers: Iterable[tuple[str, str]],
) -> Configured:
    """`api_key` must be the key itself: it is the HMAC secret, and only its hash is stored.
    `headers` follow `crossfill.webhooks.headers` (values are stored trimmed)."""
    key = await api_keys.authenticate(session, api_key)
    if key is None:
        raise WebhookConfigError(
            "give the API key itself (an active one): it signs the deliveries, "
            "and only its hash is stored"
        )
    try:
        accepted_headers = check_headers(headers)
    except HeaderRefused as exc:
        raise WebhookConfigError(str(exc)) from exc
    try:
        # On a thread: resolving the endpoint's name (production) waits on DNS.
        await asyncio.to_thread(
            check_endpoint,
            url,
            production=settings.mode is Mode.PRODUCTION,
            allow_private=settings.webhook_allow_private,
            resolve=resolved_addresses,
        )
    except ValueError as exc:
        raise WebhookConfigError(str(exc)) from exc
    endpoint = await webhook_endpoints.put(
        session,
        key.id,
        url=url,
        headers=accepted_headers,
        encrypted_key=SigningKeyBox.from_settings(settings).seal(api_key),
        now=datetime.now(UTC),
    )
    return Configured(key, endpoint)


async def find_key(session: AsyncSession, reference: str) -> ApiKey:
    key = await api_keys.find(session, reference)
    if key is None:
        raise WebhookConfigError(f"no API key matches {reference!r}")
    return key


async def replay_failed(session: AsyncSession, api_key_id: int, *, now: datetime) -> int:
    """Failed deliveries of this key go back to pending, retries counted afresh."""
    result = await session.execute(
        update(OutboxEvent)
        .where(OutboxEvent.api_key_id == api_key_id, OutboxEvent.delivery == "failed")
        .values(delivery="pending", attempts=0, next_attempt_at=now, last_error=None)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
