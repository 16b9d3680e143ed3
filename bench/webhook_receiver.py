"""A minimal ASGI webhook receiver for `bench/webhooks.py`: logs `<event id> <unix time>` lines.

Run by the bench under uvicorn in its own process, so it does not share the dispatcher's CPU
time slices. The log path comes from `CROSSFILL_BENCH_RECEIVER_LOG`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

_LOG = open(os.environ["CROSSFILL_BENCH_RECEIVER_LOG"], "a", buffering=1)  # noqa: SIM115

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    more = True
    while more:
        message = await receive()
        more = bool(message.get("more_body"))
    event_id = dict(scope["headers"]).get(b"x-webhook-id", b"?").decode()
    _LOG.write(f"{event_id} {time.time():.6f}\n")
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b""})
