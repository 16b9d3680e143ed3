"""The /ws status stream: a subscriber sees every status of its request, in order, and no other."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from eth_account.signers.local import LocalAccount
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from crossfill_client.models import Quote
from tests.conftest import RunningDevnet
from tests.e2e.bridging import bridge_request, funded_user, rpc_urls
from tests.e2e.user_client import SENT_ONLY, UserClient, evm_wallet
from tests.e2e.wire import validate_against
from tests.support.service import StartService

EVENT = "request.status.updated"
BRIDGED = ["waiting", "pending", "submitted", "success"]


def _quote(user_client: UserClient, devnet: RunningDevnet) -> tuple[Quote, LocalAccount]:
    """A new user's quote of the native bridge, and the user."""
    user = funded_user(devnet)
    return user_client.quote(bridge_request(user.address)), user


async def _send(socket: ClientConnection, kind: str, request_id: str) -> dict[str, Any]:
    await socket.send(json.dumps({"type": kind, "event": EVENT, "filters": {"id": request_id}}))
    reply: dict[str, Any] = json.loads(await socket.recv())
    return reply


async def _updates_until_success(socket: ClientConnection) -> list[dict[str, Any]]:
    updates: list[dict[str, Any]] = []
    while not updates or updates[-1]["data"]["status"] != "success":
        updates.append(json.loads(await asyncio.wait_for(socket.recv(), 30)))
    return updates


def test_subscriber_sees_its_request_in_order_and_nothing_else(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    service = start_service(run_workers=True)
    url = service.base_url.replace("http://", "ws://") + "/ws"
    with UserClient(service.base_url, rpc_urls(devnet)) as user_client:
        watched, watched_user = _quote(user_client, devnet)
        other, other_user = _quote(user_client, devnet)
        request_id = watched.request_id

        def send(quote: Quote, user: LocalAccount) -> None:
            user_client.execute(quote, evm_wallet(user), options=SENT_ONLY)

        async def scenario() -> tuple[dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
            async with connect(url) as socket:
                ready = json.loads(await socket.recv())
                subscribed = await _send(socket, "subscribe", request_id)
                await asyncio.to_thread(send, other, other_user)
                await asyncio.to_thread(send, watched, watched_user)
                return ready, subscribed, await _updates_until_success(socket)

        ready, subscribed, updates = asyncio.run(scenario())
    assert ready["type"] == "connection" and ready["status"] == "ready" and ready["data"]["id"]
    assert subscribed == {
        "type": "subscribe",
        "status": "success",
        "data": {"event": EVENT, "filters": {"id": request_id}},
    }
    assert [u["data"]["status"] for u in updates] == BRIDGED
    for update in updates:
        assert update["event"] == EVENT and isinstance(update["publishedAt"], int)
        assert update["data"]["requestId"] == request_id
        validate_against("webhook", {"event": EVENT, "timestamp": 0, "data": update["data"]})


def test_protocol_errors_and_unsubscribe(start_service: StartService) -> None:
    service = start_service()
    url = service.base_url.replace("http://", "ws://") + "/ws"

    async def scenario() -> list[dict[str, Any]]:
        replies = []
        async with connect(url) as socket:
            await socket.recv()  # ready
            for raw in ("not json", json.dumps({"type": "dance"})):
                await socket.send(raw)
                replies.append(json.loads(await socket.recv()))
            await socket.send(json.dumps({"type": "subscribe", "event": EVENT, "filters": {}}))
            replies.append(json.loads(await socket.recv()))
            replies.append(await _send(socket, "unsubscribe", "0x" + "ab" * 32))
        return replies

    replies = asyncio.run(scenario())
    assert [r["status"] for r in replies] == ["error", "error", "error", "success"]
    assert replies[-1]["type"] == "unsubscribe"


def test_an_invalid_api_key_is_closed_with_1008(start_service: StartService) -> None:
    service = start_service()
    url = service.base_url.replace("http://", "ws://") + "/ws?apiKey=cfk_wrong"

    async def scenario() -> tuple[int, str] | None:
        async with connect(url) as socket:
            try:
                await socket.recv()
            except ConnectionClosed as closed:
                return (closed.rcvd.code, closed.rcvd.reason) if closed.rcvd else None
        return None

    assert asyncio.run(scenario()) == (1008, "invalid API key")
