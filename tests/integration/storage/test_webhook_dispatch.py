"""The webhook dispatcher over a real database: an endpoint whose stored headers cannot be sent
(written before headers were checked when set) costs counted attempts, never an endless loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from crossfill.config.webhook_secret import SigningKeyBox
from crossfill.metrics import Metrics
from crossfill.settings import Settings, load_settings
from crossfill.store import api_keys, outbox, webhook_endpoints
from crossfill.store.db import session_factory
from crossfill.store.tables import OutboxEvent, Request, WebhookEndpoint
from crossfill.workers.webhooks import NOT_BUILT, NOT_SENT, UNEXPECTED, WebhookDispatcher
from tests.e2e.receiver import Receiver

ADDRESS = "0x" + "22" * 20
REQUEST_ID = "0x" + "ab" * 32
MAX_RETRIES = 2
START = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


@dataclass
class Clock:
    """The dispatcher's time: each round jumps past any backoff and lease."""

    now: datetime = START

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Hooked:
    sessions: async_sessionmaker[AsyncSession]
    settings: Settings
    dispatcher: WebhookDispatcher
    clock: Clock
    receiver: Receiver
    api_key_id: int
    event_ids: list[int]

    async def round(self) -> None:
        """Record the last round's attempts, start the due ones, let them finish."""
        await self.dispatcher.tick()
        await asyncio.sleep(0.05)
        self.clock.now += timedelta(hours=1)

    async def rounds_until(self, event_id: int, delivery: str, *, at_most: int = 20) -> None:
        """Rounds until the event is settled as `delivery` (each attempt takes one or two:
        a retry comes due a moment after the round that recorded the failure)."""
        for _ in range(at_most):
            await self.round()
            if (await self.event(event_id)).delivery == delivery:
                return

    async def event(self, event_id: int) -> OutboxEvent:
        async with self.sessions() as session:
            event = await session.get(OutboxEvent, event_id)
            assert event is not None
            return event

    async def set_headers(self, headers: dict[str, Any]) -> None:
        """Straight into storage, as rows written before the set-time rules were."""
        async with self.sessions() as session, session.begin():
            endpoint = await webhook_endpoints.get(session, self.api_key_id)
            assert endpoint is not None
            endpoint.headers = headers

    async def set_sealed_key(self, sealed: str) -> None:
        async with self.sessions() as session, session.begin():
            endpoint = await webhook_endpoints.get(session, self.api_key_id)
            assert endpoint is not None
            endpoint.encrypted_key = sealed


def _request() -> Request:
    return Request(
        id=REQUEST_ID,
        order_id="0x" + "cd" * 32,
        status="waiting",
        origin_chain_id=1,
        destination_chain_id=2,
        user_address=ADDRESS,
        recipient=ADDRESS,
        refund_to=ADDRESS,
        origin_currency=ADDRESS,
        destination_currency=ADDRESS,
        trade_type="EXACT_INPUT",
        amount_in="100",
        amount_out="99",
        minimum_amount_out="98",
        amount_in_usd_micros=100,
        explicit_deposit=True,
        quote={"steps": []},
        expires_at=START,
        created_at=START,
        updated_at=START,
    )


def _event(api_key_id: int, status: str) -> OutboxEvent:
    return OutboxEvent(
        request_id=REQUEST_ID,
        event="request.status.updated",
        payload={"status": status, "requestId": REQUEST_ID},
        created_at=START,
        api_key_id=api_key_id,
        delivery=outbox.PENDING,
        next_attempt_at=START,
    )


@pytest.fixture
async def hooked(engine: AsyncEngine, tmp_path: Path) -> AsyncIterator[Hooked]:
    """A key with a webhook to a live receiver, and two pending events of one request."""
    settings = load_settings(home=tmp_path, webhook_max_retries=MAX_RETRIES)
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        created = await api_keys.create(session, "hooks", now=START)
        session.add(_request())
        await session.flush()
        receiver = Receiver(created.secret)
        await webhook_endpoints.put(
            session,
            created.row.id,
            url=receiver.url,
            headers={},
            encrypted_key=SigningKeyBox.from_settings(settings).seal(created.secret),
            now=START,
        )
        events = [_event(created.row.id, "waiting"), _event(created.row.id, "pending")]
        session.add_all(events)
        await session.flush()
        event_ids = [event.id for event in events]
    clock = Clock()
    dispatcher = WebhookDispatcher(
        sessions, settings, now=clock, interval_seconds=0.01, metrics=Metrics()
    )
    hooked = Hooked(sessions, settings, dispatcher, clock, receiver, created.row.id, event_ids)
    try:
        yield hooked
    finally:
        await hooked.dispatcher.close()
        receiver.stop()


async def _assert_given_up_after_counted_attempts(
    hooked: Hooked, reason: str, failure: str
) -> None:
    """The first event: tried, retried MAX_RETRIES times, then failed with `reason`; unsent.
    Its attempts are counted by the failures' `failure` label (the next event's first attempt
    may be counted already), and its giving up too."""
    first_id = hooked.event_ids[0]
    await hooked.rounds_until(first_id, outbox.FAILED)
    first = await hooked.event(first_id)
    assert (first.delivery, first.attempts) == (outbox.FAILED, MAX_RETRIES + 1)
    assert first.last_error is not None and first.last_error.startswith(reason), first.last_error
    assert hooked.receiver.deliveries == []
    registry = hooked.dispatcher.metrics.registry
    failures = "crossfill_webhook_delivery_failures_total"
    counted = registry.get_sample_value(failures, {"reason": failure})
    assert counted is not None and counted >= MAX_RETRIES + 1
    assert registry.get_sample_value("crossfill_webhook_deliveries_abandoned_total") == 1


@pytest.mark.parametrize(
    ("stored_headers", "reason", "failure"),
    [
        ({"X-Partner": "acmé"}, "request not built: UnicodeEncodeError", NOT_BUILT),
        ({"X-Pärtner": "acme"}, "request not built: UnicodeEncodeError", NOT_BUILT),
        ({"X-Count": 3}, "request not built: TypeError", NOT_BUILT),
        ({"X-Partner": "acme\r\nX-Evil: 1"}, "not sent: LocalProtocolError", NOT_SENT),
    ],
)
async def test_unsendable_stored_headers_cost_counted_attempts_then_the_next_event_goes(
    hooked: Hooked, stored_headers: dict[str, Any], reason: str, failure: str
) -> None:
    await hooked.set_headers(stored_headers)
    await _assert_given_up_after_counted_attempts(hooked, reason, failure)

    # The request's next event had its turn as soon as the first was given up; once the
    # operator sets sendable headers it goes out.
    await hooked.set_headers({"X-Partner": "acme"})
    second_id = hooked.event_ids[1]
    await hooked.rounds_until(second_id, outbox.DELIVERED)
    second = await hooked.event(second_id)
    assert second.delivery == outbox.DELIVERED and second.attempts == 1
    (delivery,) = hooked.receiver.deliveries
    assert delivery.event_id == str(second_id) and delivery.authentic
    assert delivery.headers["X-Partner"] == "acme"


async def test_a_signing_key_that_does_not_decrypt_costs_counted_attempts(hooked: Hooked) -> None:
    # As after CROSSFILL_WEBHOOK_SECRET changed without the webhooks being set again.
    await hooked.set_sealed_key(SigningKeyBox("another secret").seal("cfk_key"))
    await _assert_given_up_after_counted_attempts(
        hooked, "request not built: SecretError", NOT_BUILT
    )


class BrokenDispatcher(WebhookDispatcher):
    """Fails where nothing is expected to: building the request raises a bug."""

    def _request(self, event: OutboxEvent, endpoint: WebhookEndpoint) -> httpx.Request:
        raise RuntimeError("a bug")


async def test_an_unexpected_error_in_a_delivery_is_a_counted_attempt(hooked: Hooked) -> None:
    await hooked.dispatcher.close()
    hooked.dispatcher = BrokenDispatcher(
        hooked.sessions, hooked.settings, now=hooked.clock, interval_seconds=0.01, metrics=Metrics()
    )
    await _assert_given_up_after_counted_attempts(
        hooked, "unexpected error: RuntimeError: a bug", UNEXPECTED
    )
