"""Webhook dispatcher: delivers outbox events to their API key's endpoint, durably.

Each delivery is a signed POST of the spec's payload. Not 2xx (or no answer within the
timeout) → retried with exponential backoff and jitter, up to `webhook_max_retries` times,
then kept as `failed` (`crossfill webhooks replay` sends it again). Attempts and the next
due time are in the database, so a restart loses and reorders nothing; an event whose
delivery was under way at a crash is sent again (receivers de-duplicate on X-Webhook-Id).
Deliveries run concurrently; a slow receiver only holds up its own requests' events.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Callable
from datetime import datetime, timedelta

import httpx
import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.config.webhook_secret import SigningKeyBox
from crossfill.settings import Settings
from crossfill.store import outbox
from crossfill.store.db import as_utc
from crossfill.store.tables import OutboxEvent, WebhookEndpoint
from crossfill.webhooks.signing import EVENT_ID_HEADER, signed_headers
from crossfill.workers.loop import run_forever

log = structlog.get_logger(__name__)
BATCH = 200


def retry_delay(attempt: int, *, base: float, cap: float, rng: random.Random) -> float:
    """Seconds before retry number `attempt` (1-based): exponential, capped, half jittered."""
    ceiling: float = min(cap, base * 2.0 ** (attempt - 1))
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


def delivery_body(event: OutboxEvent) -> bytes:
    document = {
        "event": event.event,
        "timestamp": int(as_utc(event.created_at).timestamp() * 1000),
        "data": event.payload,
    }
    return json.dumps(document, separators=(",", ":")).encode()


class WebhookDispatcher:
    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        settings: Settings,
        *,
        now: Callable[[], datetime],
        interval_seconds: float = 0.05,
        rng: random.Random | None = None,
    ) -> None:
        self.sessions = sessions
        self.settings = settings
        self.now = now
        self.interval_seconds = interval_seconds
        self.rng = rng or random.Random()
        self.lease = timedelta(seconds=settings.webhook_timeout_seconds + 5)
        self._box: SigningKeyBox | None = None
        self._http = httpx.AsyncClient(
            timeout=settings.webhook_timeout_seconds,
            limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
        )
        self._wakeup = asyncio.Event()

    def wake(self) -> None:
        self._wakeup.set()

    async def _wait(self) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._wakeup.wait(), self.interval_seconds)
        self._wakeup.clear()

    async def run(self) -> None:
        try:
            await run_forever("webhooks", self.tick, self._wait)
        finally:
            await self._http.aclose()

    async def tick(self) -> None:
        async with self.sessions() as session, session.begin():
            due = await outbox.claim_due(session, now=self.now(), lease=self.lease, limit=BATCH)
            keys = {event.api_key_id for event in due if event.api_key_id is not None}
            endpoints = await outbox.endpoints_for(session, keys) if keys else {}
        if due:
            await asyncio.gather(
                *(self._deliver(event, endpoints.get(event.api_key_id or 0)) for event in due)
            )

    async def _deliver(self, event: OutboxEvent, endpoint: WebhookEndpoint | None) -> None:
        if endpoint is None:
            await self._record(event.id, outbox.SKIPPED, None)
            return
        if self._box is None:
            self._box = SigningKeyBox.from_settings(self.settings)
        body = delivery_body(event)
        headers = {
            **endpoint.headers,
            "Content-Type": "application/json",
            EVENT_ID_HEADER: str(event.id),
            **signed_headers(self._box.open(endpoint.encrypted_key), body),
        }
        try:
            response = await self._http.post(endpoint.url, content=body, headers=headers)
            error = None if 200 <= response.status_code < 300 else f"HTTP {response.status_code}"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"[:500]
        if error is None:
            await self._record(event.id, outbox.DELIVERED, None)
        else:
            await self._record(event.id, None, error)

    async def _record(self, event_id: int, outcome: str | None, error: str | None) -> None:
        now = self.now()
        async with self.sessions() as session, session.begin():
            event = await session.get(OutboxEvent, event_id)
            assert event is not None
            event.lease_expires_at = None
            if outcome is not None:
                event.delivery = outcome
                event.delivered_at = now if outcome == outbox.DELIVERED else None
                return
            event.attempts += 1
            event.last_error = error
            if event.attempts > self.settings.webhook_max_retries:
                event.delivery = outbox.FAILED
                log.warning("webhook delivery failed for good", event_id=event_id, error=error)
                return
            delay = retry_delay(
                event.attempts,
                base=self.settings.webhook_backoff_base_seconds,
                cap=self.settings.webhook_backoff_cap_seconds,
                rng=self.rng,
            )
            event.next_attempt_at = now + timedelta(seconds=delay)
