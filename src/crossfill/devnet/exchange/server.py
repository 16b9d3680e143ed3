"""The devnet exchange's HTTP API: `POST /exchange`, `POST /info`, and `POST /devnet/fund`
(devnet only: credits an account, as the CLI's `crossfill devnet fund-exchange` does).

Answers as the real exchange does: a refused action is HTTP 200
`{"status": "err", "response": "<message>"}`; an accepted one
`{"status": "ok", "response": {"type": "default"}}`; a body that cannot be read is 422.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from crossfill.devnet.exchange.actions import Exchange, display
from crossfill.devnet.exchange.ledger import Leg, Refused
from crossfill.devnet.exchange.tokens import (
    LEDGER_DECIMALS,
    PERPS_DEX,
    PERPS_USD_DECIMALS,
    SPOT_DEX,
    SPOT_TOKENS,
    USDC,
    token_by_name,
)
from crossfill.domain.identifiers import is_address
from crossfill.kinds.perps.actions import parse_amount


def _json(document: object, status_code: int = 200) -> Response:
    return Response(orjson.dumps(document), status_code, media_type="application/json")


def _unreadable(message: str) -> Response:
    return Response(message, 422, media_type="text/plain")


async def _body(request: Request) -> Any:
    try:
        return orjson.loads(await request.body())
    except orjson.JSONDecodeError:
        return None


def build_app(exchange: Exchange, *, clock: Callable[[], float] = time.time) -> Starlette:
    def now_ms() -> int:
        return int(clock() * 1000)

    async def post_exchange(request: Request) -> Response:
        body = await _body(request)
        if not isinstance(body, dict):
            return _unreadable("Failed to deserialize the JSON body into the target type")
        try:
            exchange.post(body, now_ms=now_ms())
        except Refused as refused:
            return _json({"status": "err", "response": str(refused)})
        return _json({"status": "ok", "response": {"type": "default"}})

    async def post_info(request: Request) -> Response:
        return _info(exchange, await _body(request), now_ms())

    async def fund(request: Request) -> Response:
        body = await _body(request)
        try:
            user, leg = _funding(body)
        except ValueError as exc:
            return _json({"status": "err", "response": str(exc)}, 400)
        exchange.ledger.credit(user, leg)
        return _json({"status": "ok", "response": {"type": "default"}})

    return Starlette(
        routes=[
            Route("/exchange", post_exchange, methods=["POST"]),
            Route("/info", post_info, methods=["POST"]),
            Route("/devnet/fund", fund, methods=["POST"]),
        ]
    )


def _info(exchange: Exchange, body: object, now_ms: int) -> Response:
    if not isinstance(body, dict) or not isinstance(body.get("type"), str):
        return _unreadable("Failed to deserialize the JSON body into the target type")
    kind = body["type"]
    if kind == "spotMeta":
        return _json({"tokens": [t.meta() for t in SPOT_TOKENS], "universe": []})
    user = body.get("user")
    if not isinstance(user, str) or not is_address(user):
        return _unreadable("Failed to deserialize the JSON body into the target type")
    if kind == "clearinghouseState":
        return _json(_clearinghouse(exchange, user, now_ms))
    if kind == "spotClearinghouseState":
        return _json(_spot_state(exchange, user))
    if kind == "userNonFundingLedgerUpdates":
        start, end = body.get("startTime", 0), body.get("endTime")
        if not isinstance(start, int) or not (end is None or isinstance(end, int)):
            return _unreadable("startTime and endTime are millisecond integers")
        entries = exchange.ledger.entries(user, start_ms=start, end_ms=end)
        return _json([{"time": e.time, "hash": e.hash, "delta": e.delta} for e in entries])
    return _unreadable(f"Unknown info type {kind!r}")


def _clearinghouse(exchange: Exchange, user: str, now_ms: int) -> dict[str, object]:
    usd = display(exchange.ledger.balance(user, PERPS_DEX, USDC.name))
    summary = {"accountValue": usd, "totalNtlPos": "0.0", "totalRawUsd": usd,
               "totalMarginUsed": "0.0"}  # fmt: skip
    return {
        "marginSummary": summary,
        "crossMarginSummary": summary,
        "crossMaintenanceMarginUsed": "0.0",
        "withdrawable": usd,
        "assetPositions": [],
        "time": now_ms,
    }


def _spot_state(exchange: Exchange, user: str) -> dict[str, object]:
    held = exchange.ledger.balances(user, SPOT_DEX)
    return {
        "balances": [
            {
                "coin": t.name,
                "token": t.index,
                "hold": "0.0",
                "total": display(held[t.name]),
                "entryNtl": "0.0",
            }
            for t in SPOT_TOKENS
            if held.get(t.name)
        ]
    }


def _funding(body: object) -> tuple[str, Leg]:
    """`{user, amount, token?: NAME}`: perps USD without a token, else that spot token."""
    if not isinstance(body, dict):
        raise ValueError("body must be an object {user, amount, token?}")
    user, amount, token_name = body.get("user"), body.get("amount"), body.get("token")
    if not isinstance(user, str) or not is_address(user):
        raise ValueError("user must be a 0x-prefixed 20-byte hex address")
    if not isinstance(amount, str):
        raise ValueError("amount must be a decimal string")
    if token_name is None:
        units = parse_amount(amount, PERPS_USD_DECIMALS)
        return user, Leg(PERPS_DEX, USDC.name, units * 10 ** (LEDGER_DECIMALS - PERPS_USD_DECIMALS))
    token = token_by_name(str(token_name))
    if token is None:
        raise ValueError(f"unknown spot token {token_name!r}")
    units = parse_amount(amount, token.wei_decimals)
    return user, Leg(SPOT_DEX, token.name, units * 10 ** (LEDGER_DECIMALS - token.wei_decimals))
