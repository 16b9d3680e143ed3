"""Following a request to its end: the service's status stream (`/ws`) when it can be had,
polling the status path otherwise (and after the stream breaks). Each status seen is passed
to `on_status` once; the final record is always read from the status path, so what is
returned is the same whichever way the end was seen."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import ValidationError

from crossfill_client._http import ServiceHttp
from crossfill_client._websocket import WebSocket, WebSocketUnavailable, connect
from crossfill_client.errors import WaitTimeout
from crossfill_client.models.status import FINAL_STATUSES, RequestStatus, StatusRecord

StatusCallback = Callable[[StatusRecord], None]
UPDATE_EVENT = "request.status.updated"


@dataclass(frozen=True)
class WaitOptions:
    """`timeout`: seconds until `WaitTimeout`; `poll_interval`: seconds between status reads
    when polling; `use_websocket`: try the stream first; `resync_interval`: seconds of silence
    on the stream after which the status is read anyway; `until`: the statuses that end the
    wait (default: any final one; `{RequestStatus.REFUND}` waits past a `failure` for the
    refund that may follow it)."""

    timeout: float = 600.0
    poll_interval: float = 1.0
    use_websocket: bool = True
    resync_interval: float = 10.0
    until: frozenset[RequestStatus] = FINAL_STATUSES


def status_path(request_id: str) -> str:
    return f"/intents/status/v3?requestId={request_id}"


class _Follower:
    def __init__(
        self,
        service: ServiceHttp,
        request_id: str,
        path: str,
        until: frozenset[RequestStatus],
        on_status: StatusCallback | None,
    ) -> None:
        self.service, self.request_id, self.path = service, request_id, path
        self.until, self.on_status = until, on_status
        self.last: StatusRecord | None = None

    def ended(self, record: StatusRecord) -> bool:
        return record.status in self.until

    def seen(self, record: StatusRecord) -> None:
        changed = self.last is None or record.status != self.last.status
        if changed and self.on_status is not None:
            self.on_status(record)
        self.last = record

    async def read(self) -> StatusRecord:
        record = await self.service.read(StatusRecord, "GET", self.path)
        self.seen(record)
        return record

    async def poll(self, interval: float) -> StatusRecord:
        while True:
            if self.ended(record := await self.read()):
                return record
            await asyncio.sleep(interval)

    async def stream(self, options: WaitOptions) -> StatusRecord:
        params = {"apiKey": self.service.api_key} if self.service.api_key else {}
        async with connect(self.service.http, "/ws", params) as socket:
            await socket.send_text(_subscription(self.request_id))
            # Read after subscribing: a change between the first read and the subscription
            # is not missed.
            if self.ended(record := await self.read()):
                return record
            while True:
                updated = await self._next_update(socket, options.resync_interval)
                if updated and self.ended(record := await self.read()):
                    return record

    async def _next_update(self, socket: WebSocket, resync_interval: float) -> bool:
        """True when a status update of the request came, or the stream was silent for
        `resync_interval` (time to read the status anyway)."""
        try:
            message = json.loads(await socket.receive_text(resync_interval))
        except TimeoutError:
            return True
        except ValueError:
            return False
        if not isinstance(message, dict):
            return False
        if message.get("status") == "error":
            raise WebSocketUnavailable(f"the stream refused: {message}")
        data = message.get("data")
        if message.get("event") != UPDATE_EVENT or not isinstance(data, dict):
            return False
        if str(data.get("requestId", "")).lower() != self.request_id.lower():
            return False
        with contextlib.suppress(ValidationError):  # the status path is read next anyway
            self.seen(StatusRecord.model_validate(data))
        return True


def _subscription(request_id: str) -> str:
    return json.dumps({"type": "subscribe", "event": UPDATE_EVENT, "filters": {"id": request_id}})


async def wait_for_request(
    service: ServiceHttp,
    request_id: str,
    options: WaitOptions,
    *,
    path: str | None = None,
    on_status: StatusCallback | None = None,
) -> StatusRecord:
    """The request's status record once its status is one of `options.until` (by default
    once it is final: success, failure or refund)."""
    path = path or status_path(request_id)
    follower = _Follower(service, request_id, path, options.until, on_status)
    try:
        async with asyncio.timeout(options.timeout):
            if follower.ended(record := await follower.read()):
                return record
            if options.use_websocket:
                try:
                    return await follower.stream(options)
                except WebSocketUnavailable:
                    pass  # polled from here on
            return await follower.poll(options.poll_interval)
    except TimeoutError as exc:
        raise WaitTimeout(request_id, follower.last) from exc
