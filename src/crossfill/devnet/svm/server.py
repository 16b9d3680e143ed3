"""The devnet SVM node: JSON-RPC over HTTP and websocket subscriptions over one ledger.

It listens on two ports, the HTTP one and the next (as a validator does, and where
@solana/web3.js looks for the websocket by default); both serve both protocols.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from crossfill.devnet.svm import rpc
from crossfill.devnet.svm.ledger import JsonValue, Ledger, RpcFailure
from crossfill.devnet.svm.subscriptions import Outbox, SubscriptionHub

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


@dataclass
class SvmNode:
    ledger: Ledger
    hub: SubscriptionHub

    def answer(self, request: JsonValue) -> JsonValue:
        """One JSON-RPC request's answer (result or error), never an exception."""
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            return _error(None, INVALID_REQUEST, "Invalid request")
        params = request.get("params", [])
        if not isinstance(params, list):
            return _error(request.get("id"), INVALID_REQUEST, "params must be an array")
        try:
            result = rpc.call(self.ledger, request["method"], params)
        except RpcFailure as failure:
            return _error(request.get("id"), failure.code, failure.message, failure.data)
        if request["method"] in {"sendTransaction", "requestAirdrop"}:
            self.hub.on_change(self.ledger)
        return {"jsonrpc": "2.0", "id": request.get("id"), "result": result}

    def tick(self) -> None:
        self.ledger.advance()
        self.hub.on_slot(self.ledger)

    async def run_slots(self, slot_seconds: float) -> None:
        while True:
            await asyncio.sleep(slot_seconds)
            self.tick()


def _error(request_id: JsonValue, code: int, message: str, data: JsonValue = None) -> JsonValue:
    error: dict[str, JsonValue] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def build_app(node: SvmNode) -> Starlette:
    async def http_rpc(request: Request) -> Response:
        try:
            body = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            return _json(_error(None, PARSE_ERROR, "Parse error"))
        if isinstance(body, list):
            return _json([node.answer(item) for item in body])
        return _json(node.answer(body))

    async def websocket_rpc(websocket: WebSocket) -> None:
        await websocket.accept()
        outbox: Outbox = asyncio.Queue()
        writer = asyncio.create_task(_write(websocket, outbox))
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text") or message.get("bytes") or b""
                outbox.put_nowait(_subscription_answer(node, text, outbox))
        except WebSocketDisconnect:
            pass
        finally:
            node.hub.drop(outbox)
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer

    return Starlette(
        routes=[
            Route("/", http_rpc, methods=["POST"]),
            WebSocketRoute("/", websocket_rpc),
        ]
    )


async def _write(websocket: WebSocket, outbox: Outbox) -> None:
    while True:
        await websocket.send_text(orjson.dumps(await outbox.get()).decode())


def _subscription_answer(node: SvmNode, message: str | bytes, outbox: Outbox) -> JsonValue:
    try:
        request = orjson.loads(message)
    except orjson.JSONDecodeError:
        return _error(None, PARSE_ERROR, "Parse error")
    if not isinstance(request, dict):
        return _error(None, INVALID_REQUEST, "Invalid request")
    request_id, method = request.get("id"), request.get("method")
    params = request.get("params") or []
    config = params[1] if len(params) > 1 and isinstance(params[1], dict) else {}
    if method == "signatureSubscribe" and params and isinstance(params[0], str):
        commitment = config.get("commitment", "finalized")
        result: JsonValue = node.hub.subscribe_signature(params[0], commitment, outbox)
        # Already there: it fires now, after the subscription id is answered.
        asyncio.get_running_loop().call_soon(node.hub.on_change, node.ledger)
    elif method == "slotSubscribe":
        result = node.hub.subscribe_slots(outbox)
    elif method in {"signatureUnsubscribe", "slotUnsubscribe"} and params:
        result = isinstance(params[0], int) and node.hub.unsubscribe(params[0])
    elif isinstance(method, str) and method in rpc.METHODS:
        return node.answer(request)
    else:
        return _error(request_id, rpc.METHOD_NOT_FOUND, f"Method not found: {method}")
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def _json(payload: JsonValue) -> Response:
    return Response(orjson.dumps(payload), media_type="application/json")
