"""Websocket subscriptions by request id, and the fan-out of status events to them.

Each connection has a bounded queue; a client too slow to keep up is disconnected rather than
allowed to hold memory or hold up others.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

QUEUE_LIMIT = 1000


@dataclass(eq=False)
class Subscriber:
    connection_id: str
    queue: asyncio.Queue[dict[str, Any] | None] = field(
        default_factory=lambda: asyncio.Queue(QUEUE_LIMIT)
    )
    request_ids: set[str] = field(default_factory=set)
    overflowed: bool = False


class StatusHub:
    def __init__(self) -> None:
        self._by_request: dict[str, set[Subscriber]] = defaultdict(set)

    def subscribe(self, subscriber: Subscriber, request_id: str) -> None:
        subscriber.request_ids.add(request_id)
        self._by_request[request_id].add(subscriber)

    def unsubscribe(self, subscriber: Subscriber, request_id: str) -> None:
        subscriber.request_ids.discard(request_id)
        watchers = self._by_request.get(request_id)
        if watchers is not None:
            watchers.discard(subscriber)
            if not watchers:
                del self._by_request[request_id]

    def leave(self, subscriber: Subscriber) -> None:
        for request_id in list(subscriber.request_ids):
            self.unsubscribe(subscriber, request_id)

    @property
    def watched(self) -> int:
        return len(self._by_request)

    def dispatch(self, request_id: str, message: dict[str, Any]) -> None:
        for subscriber in list(self._by_request.get(request_id, ())):
            try:
                subscriber.queue.put_nowait(message)
            except asyncio.QueueFull:
                subscriber.overflowed = True
                self.leave(subscriber)
