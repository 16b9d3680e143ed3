"""Webhook dispatcher: delivers outbox events to their API key's endpoint, durably.

Each delivery is a signed POST of the spec's payload. Not 2xx (or no answer within the
timeout) → retried with exponential backoff and jitter, up to `webhook_max_retries` times,
then kept as `failed` (`crossfill webhooks replay` sends it again). Attempts and the next
due time are in the database, so a restart loses and reorders nothing; an event whose
delivery was under way at a crash is sent again (receivers de-duplicate on X-Webhook-Id).
Where only public addresses may receive webhooks (production), each delivery resolves the
endpoint's name again and connects to an address it checked (`webhooks.destination`): a
name re-pointed at a private address since it was set is refused, a failed attempt too.
Deliveries run as concurrent tasks, at most 16 at a time per endpoint; a slow receiver
only holds up its own events. A delivery that cannot even be built (say a stored header that
does not encode, from before headers were checked when set) or that fails unexpectedly is a
failed attempt like any other, with its reason: it backs off and gives up after the retries.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from datetime import datetime, timedelta

import httpx
import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.config.webhook_secret import SigningKeyBox
from crossfill.domain.webhook_url import EndpointRefused
from crossfill.loops import run_forever, stop_tasks, wait_interval
from crossfill.metrics import DELIVERED, NOT_DELIVERED, Metrics
from crossfill.settings import Mode, Settings
from crossfill.store import outbox, outbox_signal
from crossfill.store.db import as_utc
from crossfill.store.tables import OutboxEvent, WebhookEndpoint
from crossfill.webhooks.destination import PinnedDestinations
from crossfill.webhooks.signing import EVENT_ID_HEADER, signed_headers

log = structlog.get_logger(__name__)
BATCH = 500
# Concurrent deliveries per endpoint URL: enough to keep a receiver busy; a slow receiver
# fills only its own slots. (httpx's pool slows down with many open connections: 16 per
# endpoint delivered 2.3x more per second than 200 in `bench/webhooks.py`.)
SLOTS_PER_ENDPOINT = 16
MAX_IN_FLIGHT = 2000
# Why an attempt failed, as the failures counter labels it.
NOT_BUILT, NOT_SENT, REFUSED, UNEXPECTED = "not_built", "not_sent", "http_status", "unexpected"
ENDPOINT_REFUSED = "endpoint_refused"


# A short answer's body is read to its end, so that its connection serves the next delivery
# (closed unread, each delivery connected anew, over https with a new handshake: to a TLS
# receiver about a quarter fewer deliveries a second, `bench.webhooks --tls`). A longer one is
# dropped with its connection.
ANSWER_BYTES_DRAINED = 64 * 1024


async def _drain(response: httpx.Response) -> None:
    """Read what is left of `response`'s body, up to ANSWER_BYTES_DRAINED, keeping none."""
    read = 0
    async for chunk in response.aiter_raw():
        read += len(chunk)
        if read > ANSWER_BYTES_DRAINED:
            return


def retry_delay(attempt: int, *, base: float, cap: float, rng: random.Random) -> float:
    """Seconds before retry number `attempt` (1-based): exponential, capped, half jittered."""
    ceiling: float = min(cap, base * 2.0 ** (attempt - 1))
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


def _problem(stage: str, exc: Exception) -> str:
    """A failed attempt's reason as stored (the column holds 500 characters)."""
    return f"{stage}: {type(exc).__name__}: {exc}"[:500]


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
        interval_seconds: float,
        metrics: Metrics,
        rng: random.Random | None = None,
    ) -> None:
        self.sessions = sessions
        self.settings = settings
        self.now = now
        self.interval_seconds = interval_seconds
        self.metrics = metrics
        self.rng = rng or random.Random()
        self.lease = timedelta(seconds=settings.webhook_timeout_seconds + 5)
        self._box: SigningKeyBox | None = None
        self._http = self._new_client()
        # Where deliveries connect, when only public addresses may receive them: the name
        # resolved and checked at each delivery (`webhooks.destination`).
        self.destinations: PinnedDestinations | None = None
        if settings.mode is Mode.PRODUCTION and not settings.webhook_allow_private:
            self.destinations = PinnedDestinations(new_client=self._new_client)
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        self._finished: dict[int, str | None] = {}  # event id → outcome, not yet recorded
        self._keys: dict[str, str] = {}  # sealed → signing key, a small cache
        self._wakeup = asyncio.Event()

    def _new_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            timeout=self.settings.webhook_timeout_seconds,
            limits=httpx.Limits(max_connections=100, max_keepalive_connections=100),
        )

    def wake(self) -> None:
        self._wakeup.set()

    async def _wait(self) -> None:
        await wait_interval(self._wakeup, self.interval_seconds)

    async def run(self) -> None:
        outbox_signal.register(self._wakeup)
        try:
            await run_forever("webhooks", self.tick, self._wait)
        finally:
            outbox_signal.unregister(self._wakeup)
            await self.close()

    async def close(self) -> None:
        """Stop deliveries under way and close the HTTP client."""
        # Their leases run out; they are sent again (at least once).
        await stop_tasks(list(self._in_flight.values()))
        await self._http.aclose()
        if self.destinations is not None:
            await self.destinations.aclose()

    async def tick(self) -> None:
        """Record finished deliveries, then start the ones that came due. Deliveries run as
        their own tasks, so a slow receiver never holds up a tick or other receivers."""
        finished, self._finished = self._finished, {}
        if finished:
            await self._record(finished)
        if len(self._in_flight) >= MAX_IN_FLIGHT:
            return
        now = self.now()
        async with self.sessions() as session, session.begin():
            due = await outbox.claim_due(session, now=now, lease=self.lease, limit=BATCH)
            keys = {event.api_key_id for event in due if event.api_key_id is not None}
            endpoints = await outbox.endpoints_for(session, keys) if keys else {}
            # Still going, or finished while the claim was being made (its lease had run out
            # meanwhile): recorded on the next tick, never sent again.
            due = [e for e in due if e.id not in self._in_flight and e.id not in self._finished]
            # Nowhere to send them (no API key, or a key without a webhook): skipped here, in
            # the claim's transaction, all in one statement.
            unsent = [e.id for e in due if endpoints.get(e.api_key_id or 0) is None]
            await outbox.settle(session, unsent, outbox.SKIPPED, now=now)
        for event in due:
            endpoint = endpoints.get(event.api_key_id or 0)
            if endpoint is None:
                continue
            task = asyncio.create_task(self._deliver_one(event, endpoint))
            self._in_flight[event.id] = task

    async def _deliver_one(self, event: OutboxEvent, endpoint: WebhookEndpoint | None) -> None:
        try:
            self._finished[event.id] = await self._deliver(event, endpoint)
        except Exception as exc:
            # Recorded as an attempt: otherwise the event would come back each time its lease
            # ran out, uncounted, for ever, holding up the request's later events.
            log.exception("webhook delivery raised", event_id=event.id)
            self.metrics.webhook_failures.labels(UNEXPECTED).inc()
            self._finished[event.id] = _problem("unexpected error", exc)
        finally:
            self._in_flight.pop(event.id, None)
            self._wakeup.set()

    async def _deliver(self, event: OutboxEvent, endpoint: WebhookEndpoint | None) -> str | None:
        """None when delivered, `SKIPPED` without an endpoint, else what went wrong."""
        if endpoint is None:
            return outbox.SKIPPED
        try:
            request = self._request(event, endpoint)
        except (ValueError, TypeError, httpx.HTTPError, httpx.InvalidURL) as exc:
            # ValueError covers UnicodeEncodeError (a non-ASCII header) and SecretError.
            self.metrics.webhook_failures.labels(NOT_BUILT).inc()
            return _problem("request not built", exc)
        slots = self._slots.setdefault(endpoint.url, asyncio.Semaphore(SLOTS_PER_ENDPOINT))
        async with slots:
            started = time.perf_counter()
            try:
                # The status is the whole answer: at most ANSWER_BYTES_DRAINED of the body is
                # read and none kept (a receiver's endless or huge one, read whole, filled the
                # process's memory), and the attempt has one deadline (httpx's own timeout is
                # per read: headers dribbled in slowly never met it).
                async with asyncio.timeout(self.settings.webhook_timeout_seconds):
                    if self.destinations is None:
                        response = await self._http.send(request, stream=True)
                    else:
                        response = await self.destinations.send(request)
                    await _drain(response)
                    await response.aclose()
            except EndpointRefused as exc:
                self.metrics.webhook_failures.labels(ENDPOINT_REFUSED).inc()
                return f"endpoint refused: {exc}"[:500]
            except (httpx.HTTPError, TimeoutError) as exc:
                self._attempted(started, NOT_SENT)
                return _problem("not sent", exc)
        if 200 <= response.status_code < 300:
            self._attempted(started, None)
            return None
        self._attempted(started, REFUSED)
        return f"HTTP {response.status_code}"

    def _attempted(self, started: float, failure: str | None) -> None:
        """An attempt that reached the network: its duration, and why it failed if it did."""
        outcome = DELIVERED if failure is None else NOT_DELIVERED
        self.metrics.webhook_delivery.labels(outcome).observe(time.perf_counter() - started)
        if failure is not None:
            self.metrics.webhook_failures.labels(failure).inc()

    def _request(self, event: OutboxEvent, endpoint: WebhookEndpoint) -> httpx.Request:
        """The signed POST; raises if the endpoint's stored headers or key are unusable."""
        if self._box is None:
            self._box = SigningKeyBox.from_settings(self.settings)
        body = delivery_body(event)
        headers = {
            **endpoint.headers,
            "Content-Type": "application/json",
            EVENT_ID_HEADER: str(event.id),
            **signed_headers(self._signing_key(endpoint), body),
        }
        return self._http.build_request("POST", endpoint.url, content=body, headers=headers)

    def _signing_key(self, endpoint: WebhookEndpoint) -> str:
        """The endpoint's key, decrypted once per sealed value."""
        sealed = endpoint.encrypted_key
        if sealed not in self._keys:
            assert self._box is not None
            self._keys = {sealed: self._box.open(sealed), **dict(list(self._keys.items())[:99])}
        return self._keys[sealed]

    async def _record(self, outcomes: dict[int, str | None]) -> None:
        """Every attempt of the batch, in one transaction."""
        now = self.now()
        delivered = [event_id for event_id, problem in outcomes.items() if problem is None]
        skipped = [event_id for event_id, problem in outcomes.items() if problem == outbox.SKIPPED]
        failed = {
            event_id: problem
            for event_id, problem in outcomes.items()
            if problem not in (None, outbox.SKIPPED)
        }
        async with self.sessions() as session, session.begin():
            await outbox.settle(session, delivered, outbox.DELIVERED, now=now)
            await outbox.settle(session, skipped, outbox.SKIPPED, now=now)
            for event_id, problem in failed.items():
                event = await session.get(OutboxEvent, event_id)
                assert event is not None and problem is not None
                event.lease_expires_at = None
                self._failed_attempt(event, problem, now)

    def _failed_attempt(self, event: OutboxEvent, error: str, now: datetime) -> None:
        event.attempts += 1
        event.last_error = error
        if event.attempts > self.settings.webhook_max_retries:
            event.delivery = outbox.FAILED
            self.metrics.webhook_abandoned.inc()
            log.warning("webhook delivery failed for good", event_id=event.id, error=error)
            return
        delay = retry_delay(
            event.attempts,
            base=self.settings.webhook_backoff_base_seconds,
            cap=self.settings.webhook_backoff_cap_seconds,
            rng=self.rng,
        )
        event.next_attempt_at = now + timedelta(seconds=delay)
