"""Webhook endpoints, one per API key. The caller owns the transaction."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.store.tables import WebhookEndpoint


async def put(
    session: AsyncSession,
    api_key_id: int,
    *,
    url: str,
    headers: dict[str, str],
    encrypted_key: str,
    now: datetime,
) -> WebhookEndpoint:
    endpoint = await session.get(WebhookEndpoint, api_key_id)
    if endpoint is None:
        endpoint = WebhookEndpoint(api_key_id=api_key_id)
        session.add(endpoint)
    endpoint.url = url
    endpoint.headers = dict(headers)
    endpoint.encrypted_key = encrypted_key
    endpoint.updated_at = now
    await session.flush()
    return endpoint


async def get(session: AsyncSession, api_key_id: int) -> WebhookEndpoint | None:
    return await session.get(WebhookEndpoint, api_key_id)


async def remove(session: AsyncSession, api_key_id: int) -> bool:
    endpoint = await session.get(WebhookEndpoint, api_key_id)
    if endpoint is None:
        return False
    await session.delete(endpoint)
    return True
