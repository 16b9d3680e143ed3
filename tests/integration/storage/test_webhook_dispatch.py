"""The webhook dispatcher over a real database: an endpoint whose stored headers cannot be sent
(written before headers were checked when set) costs counted attempts, never an endless loop."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from crossfill.config.webhook_secret import SigningKeyBox
from crossfill.domain.webhook_url import EndpointRefused
from crossfill.metrics import Metrics
from crossfill.settings import Settings, load_settings
from crossfill.store import api_keys, outbox, webhook_endpoints
from crossfill.store.db import session_factory
from crossfill.store.tables import OutboxEvent, Request, WebhookEndpoint
from crossfill.webhooks.destination import PinnedDestinations
from crossfill.workers.webhooks import (
    ENDPOINT_REFUSED,
    NOT_BUILT,
    NOT_SENT,
    UNEXPECTED,
    WebhookDispatcher,
)
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


@contextlib.asynccontextmanager
async def _hooked(
    engine: AsyncEngine, settings: Settings, receiver: Receiver, url: str
) -> AsyncIterator[Hooked]:
    """A key with a webhook to `url`, served by `receiver`, and two pending events of one
    request."""
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        created = await api_keys.create(session, "hooks", now=START)
        receiver.key = created.secret
        session.add(_request())
        await session.flush()
        await webhook_endpoints.put(
            session,
            created.row.id,
            url=url,
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


@pytest.fixture
async def hooked(engine: AsyncEngine, tmp_path: Path) -> AsyncIterator[Hooked]:
    settings = load_settings(home=tmp_path, webhook_max_retries=MAX_RETRIES)
    receiver = Receiver("set once the key is made")
    async with _hooked(engine, settings, receiver, receiver.url) as hooked:
        yield hooked


async def test_a_short_answer_is_read_and_its_connection_serves_the_next_delivery(
    engine: AsyncEngine, tmp_path: Path
) -> None:
    settings = load_settings(home=tmp_path, webhook_max_retries=MAX_RETRIES)
    receiver = Receiver("set once the key is made", keep_alive=True)
    async with _hooked(engine, settings, receiver, receiver.url) as hooked:
        for event_id in hooked.event_ids:
            await hooked.rounds_until(event_id, outbox.DELIVERED)
        first, second = hooked.receiver.accepted()
        assert first.peer is not None and first.peer == second.peer  # one connection


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


# A name no DNS knows: only the test's resolver gives it an address.
NAME = "hooks.example"


@pytest.fixture
def test_ca(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> trustme.CA:
    """A certificate authority the dispatcher's HTTP client trusts (httpx reads
    SSL_CERT_FILE when the client is made)."""
    ca = trustme.CA()
    bundle = tmp_path / "test-ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    return ca


@pytest.fixture
async def pinned(engine: AsyncEngine, tmp_path: Path, test_ca: trustme.CA) -> AsyncIterator[Hooked]:
    """Production: a webhook to https://hooks.example:PORT/hooks, served over TLS by a
    receiver on 127.0.0.1 whose certificate names hooks.example only."""
    settings = load_settings(
        home=tmp_path,
        mode="production",
        webhook_secret="a webhook secret for the test",
        webhook_max_retries=MAX_RETRIES,
    )
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    test_ca.issue_cert(NAME).configure_cert(tls)
    receiver = Receiver("set once the key is made", tls=tls)
    url = f"https://{NAME}:{receiver.port}/hooks"
    async with _hooked(engine, settings, receiver, url) as hooked:
        yield hooked


@dataclass
class Resolver:
    """The name's addresses, as the test says; how many times it was asked."""

    addresses: list[str]
    asked: int = 0

    async def __call__(self, host: str) -> list[str]:
        assert host == NAME
        self.asked += 1
        return list(self.addresses)


async def test_a_delivery_connects_to_the_address_it_checked_under_the_name(
    pinned: Hooked,
) -> None:
    assert pinned.dispatcher.destinations is not None  # production pins every delivery
    resolver = Resolver(["127.0.0.1"])
    checked: list[tuple[str, list[str]]] = []

    def loopback_allowed(host: str, addresses: Sequence[str]) -> None:
        checked.append((host, list(addresses)))

    pinned.dispatcher.destinations = PinnedDestinations(
        new_client=httpx.AsyncClient, resolve=resolver, check=loopback_allowed
    )
    for event_id in pinned.event_ids:
        await pinned.rounds_until(event_id, outbox.DELIVERED)

    # Delivered over TLS to a certificate for the name, not the address: the handshake
    # carried the name; the Host header too.
    deliveries = pinned.receiver.accepted()
    assert [delivery.event_id for delivery in deliveries] == [str(i) for i in pinned.event_ids]
    for delivery in deliveries:
        assert delivery.authentic
        assert delivery.headers["Host"] == f"{NAME}:{pinned.receiver.port}"
    # The second delivery went to the address checked for the first.
    assert checked == [(NAME, ["127.0.0.1"])]
    assert resolver.asked == 1


@pytest.mark.parametrize(
    "addresses",
    [["127.0.0.1"], ["93.184.216.34", "10.0.0.7"], ["169.254.169.254"], ["::ffff:192.168.1.9"]],
)
async def test_a_name_resolving_to_a_private_address_at_delivery_is_not_sent_to(
    pinned: Hooked, addresses: list[str]
) -> None:
    # The name was public when the endpoint was set; it resolves elsewhere now (rebinding).
    pinned.dispatcher.destinations = PinnedDestinations(
        new_client=httpx.AsyncClient, resolve=Resolver(addresses)
    )
    await _assert_given_up_after_counted_attempts(
        pinned, f"endpoint refused: {NAME} is a private or local address", ENDPOINT_REFUSED
    )


async def test_names_sharing_an_address_each_have_their_own_handshake(
    test_ca: trustme.CA,
) -> None:
    """Two receivers behind one address (one CDN): each name's deliveries go out on a
    connection whose TLS handshake named it, never on the other's pooled one."""
    names = ["a.hooks.example", "b.hooks.example"]
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    test_ca.issue_cert(*names).configure_cert(tls)
    receiver = Receiver("not checked here", tls=tls, keep_alive=True)

    async def one_address(host: str) -> list[str]:
        return ["127.0.0.1"]

    def loopback_allowed(host: str, addresses: Sequence[str]) -> None:
        pass

    destinations = PinnedDestinations(
        new_client=httpx.AsyncClient, resolve=one_address, check=loopback_allowed
    )
    try:
        for name in names * 2:
            url = f"https://{name}:{receiver.port}/hooks"
            answer = await destinations.send(httpx.Request("POST", url, json={"data": {}}))
            await answer.aread()  # read to its end: the connection may then serve another
            await answer.aclose()
        seen = [(d.headers["Host"].split(":")[0], d.sni) for d in receiver.deliveries]
        assert seen == [(name, name) for name in names * 2]
    finally:
        await destinations.aclose()
        receiver.stop()


async def test_a_name_that_no_longer_resolves_is_a_counted_refused_attempt(pinned: Hooked) -> None:
    async def gone(host: str) -> list[str]:
        raise EndpointRefused(f"host {host!r} does not resolve")

    pinned.dispatcher.destinations = PinnedDestinations(new_client=httpx.AsyncClient, resolve=gone)
    await _assert_given_up_after_counted_attempts(
        pinned, f"endpoint refused: host '{NAME}' does not resolve", ENDPOINT_REFUSED
    )
