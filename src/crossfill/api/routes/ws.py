"""GET /ws: the status stream (compat notes' protocol).

Server: `{"type":"connection","status":"ready","data":{"id":...}}` on connect. Client:
`{"type":"subscribe","event":"request.status.updated","filters":{"id":"<requestId>"}}` (or
`unsubscribe`), answered `{"type":"subscribe","status":"success","data":{event,filters}}`.
Updates: `{"event":"request.status.updated","data":{...as the webhook...},"publishedAt":ms}`.
`?apiKey=` is optional; an invalid one closes the socket (1008) once accepted. What a client
may send, and the close codes for breaking it, are in `crossfill.api.ws_limits`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from crossfill.api.auth import presented_key_id
from crossfill.api.client_address import client_address, client_group
from crossfill.api.ws_limits import (
    POLICY_VIOLATION,
    TRY_AGAIN_LATER,
    CloseSocket,
    ConnectionsByAddress,
    MessageBucket,
    receive_text,
)
from crossfill.domain.identifiers import is_hash32
from crossfill.errors import TooManyRequests, Unauthorized
from crossfill.events.hub import StatusHub, Subscriber
from crossfill.events.tail import OutboxTail
from crossfill.runtime import Runtime
from crossfill.settings import Settings
from crossfill.store.db import UNAVAILABLE

router = APIRouter(tags=["events"])
EVENT = "request.status.updated"


def _reply(kind: str, status: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "status": status, "data": data}


def _error(message: str) -> dict[str, Any]:
    return _reply("error", "error", {"message": message})


def _handle(
    hub: StatusHub, subscriber: Subscriber, text: str, settings: Settings
) -> dict[str, Any]:
    try:
        message = json.loads(text)
    except RecursionError:  # the decoder recurses once per level of nesting
        return _error("messages must not be nested this deeply")
    except ValueError:
        return _error("messages must be JSON")
    kind = message.get("type") if isinstance(message, dict) else None
    if kind not in ("subscribe", "unsubscribe"):
        return _error("type must be subscribe or unsubscribe")
    filters = message.get("filters")
    request_id = filters.get("id") if isinstance(filters, dict) else None
    if message.get("event") != EVENT or not is_hash32(request_id):
        detail = f"{kind} needs event {EVENT} and filters.id, a requestId (0x and 64 hex digits)"
        return _reply(kind, "error", {"message": detail})
    if kind == "subscribe":
        if len(subscriber.request_ids) >= settings.ws_max_subscriptions:
            return _reply(kind, "error", {"message": "too many subscriptions"})
        hub.subscribe(subscriber, request_id.lower())
    else:
        hub.unsubscribe(subscriber, request_id.lower())
    return _reply(kind, "success", {"event": EVENT, "filters": {"id": request_id}})


async def _send_updates(websocket: WebSocket, subscriber: Subscriber) -> None:
    while True:
        message = await subscriber.queue.get()
        if message is None:
            return
        await websocket.send_json(message)


async def _answer_messages(
    websocket: WebSocket, subscriber: Subscriber, settings: Settings
) -> None:
    """Answer the client's messages until it leaves; raises CloseSocket on a broken limit."""
    hub: StatusHub = websocket.app.state.hub
    tail: OutboxTail = websocket.app.state.outbox_tail
    bucket = MessageBucket(settings.ws_messages_per_second, settings.ws_message_burst)
    while (text := await receive_text(websocket, settings)) is not None:
        if bucket.take():
            await tail.prime()  # before any subscription is confirmed
            reply = _handle(hub, subscriber, text, settings)
        else:
            rate = f"{settings.ws_messages_per_second:g} a second"
            reply = _error(f"too many messages: at most {rate}; this one was ignored")
        if subscriber.overflowed:
            raise CloseSocket(POLICY_VIOLATION, "too slow: updates were not being read")
        try:
            subscriber.queue.put_nowait(reply)
        except asyncio.QueueFull:
            raise CloseSocket(POLICY_VIOLATION, "too slow: replies were not being read") from None


async def _check_key(websocket: WebSocket, runtime: Runtime, address: str) -> None:
    """`?apiKey=`: checked like `x-api-key` (wrong guesses limited per address)."""
    api_key = websocket.query_params.get("apiKey")
    if not api_key:
        return
    try:
        await presented_key_id(websocket, runtime, address, api_key)
    except Unauthorized:
        raise CloseSocket(POLICY_VIOLATION, "invalid API key") from None
    except TooManyRequests:
        raise CloseSocket(TRY_AGAIN_LATER, "too many invalid API keys; retry later") from None
    except UNAVAILABLE:
        raise CloseSocket(TRY_AGAIN_LATER, "the database did not answer; retry later") from None


async def _stream(websocket: WebSocket, runtime: Runtime, address: str) -> None:
    await _check_key(websocket, runtime, address)
    subscriber = Subscriber(connection_id=uuid.uuid4().hex)
    await websocket.send_json(_reply("connection", "ready", {"id": subscriber.connection_id}))
    sender = asyncio.create_task(_send_updates(websocket, subscriber))
    try:
        await _answer_messages(websocket, subscriber, runtime.settings)
    finally:
        websocket.app.state.hub.leave(subscriber)
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sender


@router.websocket("/ws")
async def status_stream(websocket: WebSocket) -> None:
    runtime: Runtime = websocket.app.state.runtime
    connections: ConnectionsByAddress = websocket.app.state.ws_connections
    address = client_address(websocket, runtime.settings.trusted_proxies)
    group = client_group(address)
    # Accepted before any refusal: a close code and reason reach the client (a browser sees
    # nothing of a refused handshake).
    counted = connections.enter(group, runtime.settings.ws_max_connections_per_address)
    try:
        await websocket.accept()
        if not counted:
            raise CloseSocket(POLICY_VIOLATION, "too many connections from this address")
        await _stream(websocket, runtime, address)
    except CloseSocket as close:
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):
            await websocket.close(close.code, close.reason)
    except WebSocketDisconnect:
        pass
    finally:
        if counted:
            connections.leave(group)
