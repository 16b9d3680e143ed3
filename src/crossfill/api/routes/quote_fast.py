"""POST /quote/v2 and POST /quote without FastAPI's per-request machinery, for the bodies that
need none of it.

FastAPI's route (body reading, dependency solving, validation into the model, its exit stacks)
took about a sixth of a loaded API process's main thread. A plain Starlette route placed before
it serves a well-formed JSON body the same way: the same caller and rate-limit checks, in the
same order as the dependencies run, the same model (`QuoteBody.model_validate`, Python mode, as
FastAPI validates a body), the same use case. Any body it does not take at once (another
content type, JSON that does not parse or does not validate) goes to FastAPI's own route,
replayed (the router is entered again with the fast route declining), so every error keeps
FastAPI's exact shape and order. FastAPI's routes stay registered, so the OpenAPI document does
not change.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import FastAPI
from pydantic import ValidationError
from starlette.requests import Request
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from crossfill.api.answers import encoded_answer
from crossfill.api.auth import caller_of
from crossfill.api.rate_limit import rate_limited
from crossfill.api.schemas.quote import QuoteBody
from crossfill.app.quote_answers import quote_answer
from crossfill.runtime import Runtime

PATHS = ("/quote/v2", "/quote")


# Set in a request's scope once its fast route has handed it over to FastAPI's.
_DECLINED = "crossfill.fast_quote_declined"


def install_fast_quote_routes(app: FastAPI) -> None:
    """Put a fast route in front of each quote path's FastAPI route (routes are matched in
    order; FastAPI's stay where they are)."""
    for path in PATHS:
        app.router.routes.insert(0, _FastRoute(path, _FastQuote(app.router), methods=["POST"]))


class _FastRoute(Route):
    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope.get(_DECLINED):
            return Match.NONE, {}
        return super().matches(scope)


class _FastQuote:
    def __init__(self, router: ASGIApp) -> None:
        self._router = router

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        raw = await request.body()
        body = _well_formed(request, raw)
        if body is None:
            await self._router({**scope, _DECLINED: True}, _replaying(raw, receive), send)
            return
        runtime: Runtime = request.app.state.runtime
        caller = await caller_of(request, runtime)
        await rate_limited(request, caller, runtime)
        answer = await quote_answer(runtime, body.to_request(), api_key_id=caller.key_id)
        await encoded_answer(answer)(scope, receive, send)


def _well_formed(request: Request, raw: bytes) -> QuoteBody | None:
    """The body as the model, or None for anything FastAPI's route should answer."""
    content_type = request.headers.get("content-type", "")
    if not raw or content_type.split(";")[0].strip().lower() != "application/json":
        return None
    try:
        document: Any = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, dict):
        return None
    try:
        return QuoteBody.model_validate(document)
    except ValidationError:
        return None


def _replaying(raw: bytes, receive: Receive) -> Receive:
    """`receive` for a request whose body was read already: that body, then what follows."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        return await receive()

    return replay
