"""The /ws limits in isolation: the message bucket, the per-address count, and closing a
client that reads nothing."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any, cast

import pytest
from fastapi import WebSocket

from crossfill.api.routes.ws import _answer_messages
from crossfill.api.ws_limits import (
    REFUSALS_BEFORE_CLOSE,
    CloseSocket,
    ConnectionsByAddress,
    MessageBucket,
)
from crossfill.events.hub import QUEUE_LIMIT, StatusHub, Subscriber
from crossfill.settings import Settings

SUBSCRIBE = json.dumps(
    {"type": "subscribe", "event": "request.status.updated", "filters": {"id": "0x" + "ab" * 32}}
)


def test_the_bucket_allows_a_burst_refuses_then_closes_a_client_that_keeps_sending() -> None:
    bucket = MessageBucket(per_second=1, burst=3)
    assert [bucket.take() for _ in range(3)] == [True] * 3
    assert [bucket.take() for _ in range(REFUSALS_BEFORE_CLOSE)] == [False] * REFUSALS_BEFORE_CLOSE
    with pytest.raises(CloseSocket) as closed:
        bucket.take()
    assert closed.value.code == 1008


def test_the_bucket_refills_and_a_taken_token_forgives_earlier_refusals() -> None:
    bucket = MessageBucket(per_second=2, burst=2)
    assert [bucket.take() for _ in range(2 + REFUSALS_BEFORE_CLOSE)][-1] is False
    bucket.at -= 1.0  # a second passes: two tokens, never more than the burst
    assert [bucket.take(), bucket.take(), bucket.take()] == [True, True, False]
    assert bucket.refused_in_a_row == 1


def test_an_address_at_its_cap_is_refused_until_one_of_its_connections_leaves() -> None:
    connections = ConnectionsByAddress()
    assert [connections.enter("10.0.0.1", 2) for _ in range(3)] == [True, True, False]
    assert connections.enter("10.0.0.2", 2)
    connections.leave("10.0.0.1")
    assert connections.enter("10.0.0.1", 2)


class _Tail:
    async def prime(self) -> None:
        return None


def _socket_sending(*texts: str) -> WebSocket:
    messages = [{"type": "websocket.receive", "text": text} for text in texts]
    messages.append({"type": "websocket.disconnect"})

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    state = SimpleNamespace(hub=StatusHub(), outbox_tail=_Tail())
    return cast(WebSocket, SimpleNamespace(app=SimpleNamespace(state=state), receive=receive))


@pytest.mark.parametrize("cause", ["replies", "updates"])
def test_a_client_that_reads_nothing_is_closed_as_too_slow(cause: str) -> None:
    subscriber = Subscriber(connection_id="slow")
    if cause == "replies":  # its replies filled the queue
        for _ in range(QUEUE_LIMIT):
            subscriber.queue.put_nowait(None)
    else:  # the hub gave up on it: its updates filled the queue
        subscriber.overflowed = True
    socket = _socket_sending(SUBSCRIBE)

    with pytest.raises(CloseSocket) as closed:
        asyncio.run(_answer_messages(socket, subscriber, Settings()))
    assert closed.value.code == 1008
    assert closed.value.reason == f"too slow: {cause} were not being read"
