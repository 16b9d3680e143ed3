"""The /ws stream against a hostile, unauthenticated client: what it may send and hold is
bounded, and breaking a limit ends in a close frame whose code says which."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from typing import Any, cast

from fastapi import FastAPI
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from crossfill.events.hub import StatusHub
from tests.support.hostile_websocket import attack
from tests.support.service import ServiceThread, StartService

EVENT = "request.status.updated"
GROWTH_LIMIT_BYTES = 50 * 2**20


def _ws_url(service: ServiceThread) -> str:
    return service.base_url.replace("http://", "ws://") + "/ws"


def _hub(service: ServiceThread) -> StatusHub:
    return cast(StatusHub, cast(FastAPI, service.server.config.app).state.hub)


def _subscribe(request_id: str) -> str:
    return json.dumps({"type": "subscribe", "event": EVENT, "filters": {"id": request_id}})


def _request_id(number: int) -> str:
    return f"0x{number:064x}"


async def _reply(socket: ClientConnection) -> dict[str, Any]:
    reply: dict[str, Any] = json.loads(await asyncio.wait_for(socket.recv(), 5))
    return reply


async def _close_after(socket: ClientConnection, message: str | bytes) -> tuple[int, str]:
    """Send `message`; the close code and reason the server answers with."""
    await socket.send(message)
    try:
        while True:
            await asyncio.wait_for(socket.recv(), 5)
    except ConnectionClosed as closed:
        assert closed.rcvd is not None, "closed without a close frame"
        return closed.rcvd.code, closed.rcvd.reason


async def _closed_at_once(url: str) -> tuple[int, str] | None:
    """The close code and reason of a connection closed before "ready"; None if it opened."""
    async with connect(url) as socket:
        try:
            await _reply(socket)
        except ConnectionClosed as closed:
            assert closed.rcvd is not None, "closed without a close frame"
            return closed.rcvd.code, closed.rcvd.reason
    return None


def test_a_subscription_id_that_is_not_a_request_id_is_refused_and_not_stored(
    start_service: StartService,
) -> None:
    service = start_service()
    not_request_ids = [
        "0x" + "ab" * 2000,  # long: held per subscription, it was the memory lever
        "0xabc",
        _request_id(1) + "\n",  # a `$`-anchored pattern lets a trailing newline through
        "0x" + "\u0663" * 64,  # Arabic-Indic digits: `\d` and str.isdigit accept them
        _request_id(1)[:-1] + "g",
    ]

    async def scenario() -> tuple[list[dict[str, Any]], int, dict[str, Any], int]:
        async with connect(_ws_url(service)) as socket:
            await _reply(socket)  # ready
            refused = []
            for request_id in not_request_ids:
                await socket.send(_subscribe(request_id))
                refused.append(await _reply(socket))
            watched_after_refusals = _hub(service).watched
            await socket.send(_subscribe(_request_id(2).upper().replace("0X", "0x")))
            accepted = await _reply(socket)
            return refused, watched_after_refusals, accepted, _hub(service).watched

    refused, watched_after_refusals, accepted, watched = asyncio.run(scenario())
    assert [r["status"] for r in refused] == ["error"] * len(not_request_ids)
    assert all("requestId" in r["data"]["message"] for r in refused)
    assert all(len(json.dumps(r)) < 300 for r in refused)  # the id is not echoed back
    assert watched_after_refusals == 0
    assert accepted["status"] == "success" and watched == 1


def test_connections_beyond_the_per_address_cap_are_closed_with_1008(
    start_service: StartService,
) -> None:
    service = start_service(settings={"ws_max_connections_per_address": 3})
    url = _ws_url(service)

    async def scenario() -> tuple[tuple[int, str] | None, tuple[int, str] | None]:
        sockets = [await connect(url) for _ in range(3)]
        for socket in sockets:
            assert (await _reply(socket))["type"] == "connection"
        refused = await _closed_at_once(url)
        await sockets.pop().close()
        # The server counts the closed connection out once it has seen the close.
        for _ in range(50):
            reopened = await _closed_at_once(url)
            if reopened is None:
                break
            await asyncio.sleep(0.1)
        for socket in sockets:
            await socket.close()
        return refused, reopened

    refused, reopened = asyncio.run(scenario())
    assert refused == (1008, "too many connections from this address")
    assert reopened is None


def test_messages_beyond_the_rate_are_refused_then_the_socket_is_closed_with_1008(
    start_service: StartService,
) -> None:
    service = start_service(settings={"ws_messages_per_second": 0.1, "ws_message_burst": 5})

    async def scenario() -> tuple[list[str], int, tuple[int, str]]:
        async with connect(_ws_url(service)) as socket:
            await _reply(socket)  # ready
            statuses = []
            for number in range(15):  # a burst of 5, then 10 refusals in a row
                await socket.send(_subscribe(_request_id(number)))
                reply = await _reply(socket)
                statuses.append(reply["status"])
                if reply["status"] == "error":
                    assert reply["data"]["message"].startswith("too many messages")
            watched = _hub(service).watched
            return statuses, watched, await _close_after(socket, _subscribe(_request_id(99)))

    statuses, watched, closed = asyncio.run(scenario())
    assert statuses == ["success"] * 5 + ["error"] * 10
    assert watched == 5  # refused messages are not acted on
    assert closed == (1008, "message rate limit exceeded")


def test_a_frame_over_the_size_limit_is_closed_with_1009(start_service: StartService) -> None:
    service = start_service(settings={"ws_max_message_bytes": 1024})
    at_the_limit = _subscribe(_request_id(1))
    at_the_limit = at_the_limit[:-1] + ', "pad": "' + "x" * (1024 - len(at_the_limit) - 11) + '"}'

    async def scenario() -> tuple[dict[str, Any], tuple[int, str], tuple[int, str]]:
        async with connect(_ws_url(service)) as socket:
            await _reply(socket)  # ready
            await socket.send(at_the_limit)
            accepted = await _reply(socket)
            too_long = await _close_after(socket, "x" * 1025)
        async with connect(_ws_url(service)) as socket:
            await _reply(socket)
            # 600 characters, 1,200 bytes: the limit is in bytes
            too_many_bytes = await _close_after(socket, "\u00e9" * 600)
        return accepted, too_long, too_many_bytes

    assert len(at_the_limit.encode()) == 1024
    accepted, too_long, too_many_bytes = asyncio.run(scenario())
    assert accepted["status"] == "success"
    # uvicorn refuses the frame from its header (`ws_max_size`), before reading it.
    for code, reason in (too_long, too_many_bytes):
        assert code == 1009 and "1024 bytes" in reason


def test_a_binary_frame_is_closed_with_1003(start_service: StartService) -> None:
    service = start_service()

    async def scenario() -> tuple[int, str]:
        async with connect(_ws_url(service)) as socket:
            await _reply(socket)  # ready
            return await _close_after(socket, b'{"type": "subscribe"}')

    code, reason = asyncio.run(scenario())
    assert code == 1003 and "binary" in reason


def test_text_that_is_not_utf8_is_closed_with_1007(start_service: StartService) -> None:
    service = start_service()

    async def scenario() -> tuple[int, str]:
        async with connect(_ws_url(service)) as socket:
            await _reply(socket)  # ready
            await socket.send(b"\xff\xfe{}", text=True)
            return await _close_after(socket, "{}")

    assert asyncio.run(scenario())[0] == 1007


def test_deeply_nested_json_gets_an_error_reply_and_the_socket_stays_usable(
    start_service: StartService,
) -> None:
    # A limit high enough to let nesting far past Python's recursion limit through.
    service = start_service(settings={"ws_max_message_bytes": 200_000})

    async def scenario() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with connect(_ws_url(service)) as socket:
            await _reply(socket)  # ready
            await socket.send("[" * 100_000)
            unclosed = await _reply(socket)
            await socket.send("[" * 50_000 + "]" * 50_000)
            closed = await _reply(socket)
            await socket.send(_subscribe(_request_id(1)))
            return unclosed, closed, await _reply(socket)

    unclosed, closed, subscribed = asyncio.run(scenario())
    for nested in (unclosed, closed):
        assert nested == {
            "type": "error",
            "status": "error",
            "data": {"message": "messages must not be nested this deeply"},
        }
    assert subscribed["status"] == "success"


def test_the_worst_one_address_can_do_for_seconds_leaves_memory_flat(
    start_service: StartService,
) -> None:
    service = start_service()
    url = _ws_url(service)

    # The service runs in this process: its memory is this process's. A first round warms
    # both ends up (imports, buffers, allocator arenas) so the measured one shows what stays.
    # Ids of 64 KiB, not 2 MB: the client's own copies of each frame count here too.
    asyncio.run(attack(url, os.getpid(), seconds=1, attackers=30, long_id_bytes=65536))
    outcome = asyncio.run(attack(url, os.getpid(), seconds=4, attackers=30, long_id_bytes=65536))

    async def afterwards() -> dict[str, Any]:
        for _ in range(50):  # until the attackers' connections are counted out
            async with connect(url) as socket:
                with contextlib.suppress(ConnectionClosed):
                    await _reply(socket)  # ready
                    await socket.send(_subscribe(_request_id(1)))
                    return await _reply(socket)
            await asyncio.sleep(0.1)
        raise AssertionError("the service refused every connection after the attack")

    assert outcome.peak_rss - outcome.start_rss < GROWTH_LIMIT_BYTES
    tally = outcome.tally
    assert tally.refused > 0 and tally.messages_sent > 1000
    assert {1003, 1008, 1009} <= tally.closes.keys()
    assert asyncio.run(afterwards())["status"] == "success"


def test_wrong_websocket_keys_spend_the_addresss_wrong_key_budget(
    start_service: StartService,
) -> None:
    service = start_service(settings={"rate_limit_bad_key_per_minute": 2})

    async def close_code() -> int:
        async with connect(f"{_ws_url(service)}?apiKey=cfk_wrong") as socket:
            with contextlib.suppress(ConnectionClosed):
                while True:
                    await socket.recv()
            assert socket.close_code is not None
            return socket.close_code

    codes = [asyncio.run(close_code()) for _ in range(4)]
    assert codes == [1008, 1008, 1013, 1013]
