"""GET /ws: the status stream (compat notes' protocol).

Server: `{"type":"connection","status":"ready","data":{"id":...}}` on connect. Client:
`{"type":"subscribe","event":"request.status.updated","filters":{"id":"<requestId>"}}` (or
`unsubscribe`), answered `{"type":"subscribe","status":"success","data":{event,filters}}`.
Updates: `{"event":"request.status.updated","data":{...as the webhook...},"publishedAt":ms}`.
`?apiKey=` is optional; an invalid one closes the socket (1008).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from typing import Any

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from crossfill.api.auth import KeyCache
from crossfill.events.hub import StatusHub, Subscriber
from crossfill.events.tail import OutboxTail
from crossfill.runtime import Runtime

router = APIRouter(tags=["events"])
EVENT = "request.status.updated"
MAX_SUBSCRIPTIONS = 1000


def _reply(kind: str, status: str, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "status": status, "data": data}


def _handle(hub: StatusHub, subscriber: Subscriber, text: str) -> dict[str, Any]:
    try:
        message = json.loads(text)
    except ValueError:
        return _reply("error", "error", {"message": "messages must be JSON"})
    kind = message.get("type") if isinstance(message, dict) else None
    if kind not in ("subscribe", "unsubscribe"):
        return _reply("error", "error", {"message": "type must be subscribe or unsubscribe"})
    filters = message.get("filters")
    request_id = filters.get("id") if isinstance(filters, dict) else None
    if message.get("event") != EVENT or not isinstance(request_id, str) or not request_id:
        detail = f"{kind} needs event {EVENT} and filters.id (a requestId)"
        return _reply(kind, "error", {"message": detail})
    if kind == "subscribe":
        if len(subscriber.request_ids) >= MAX_SUBSCRIPTIONS:
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


@router.websocket("/ws")
async def status_stream(websocket: WebSocket) -> None:
    runtime: Runtime = websocket.app.state.runtime
    hub: StatusHub = websocket.app.state.hub
    tail: OutboxTail = websocket.app.state.outbox_tail
    api_key = websocket.query_params.get("apiKey")
    if api_key:
        cache: KeyCache = websocket.app.state.key_cache
        if await cache.key_id(runtime, api_key) is None:
            await websocket.close(code=1008, reason="invalid API key")
            return
    await websocket.accept()
    subscriber = Subscriber(connection_id=uuid.uuid4().hex)
    await websocket.send_json(_reply("connection", "ready", {"id": subscriber.connection_id}))
    sender = asyncio.create_task(_send_updates(websocket, subscriber))
    try:
        while not subscriber.overflowed:
            text = await websocket.receive_text()
            await tail.prime()  # before any subscription is confirmed
            subscriber.queue.put_nowait(_handle(hub, subscriber, text))
    except WebSocketDisconnect:
        pass
    finally:
        hub.leave(subscriber)
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sender
