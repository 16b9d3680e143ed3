"""POST /quote/v2 and POST /quote ahead of the whole middleware stack, for the bodies that need
none of it.

The middleware stack around a route (server errors, telemetry, body limit, request limits,
CORS, exceptions, FastAPI's exit stack and router, each wrapping `send` again) and FastAPI's
route (body reading, dependency solving, its exit stacks) took about a sixth of a loaded API
process's main thread. `QuoteFront` is the app's outermost ASGI layer: a POST to a quote path
whose headers pass the request limits, whose body is JSON within them and validates into the
same `QuoteBody` (Python mode, as FastAPI validates a body) is served here, with what the
stack would have done for it:

- the caller and rate-limit checks, by the same functions the dependencies call, in the same
  order;
- CORS headers, by the app's own `CORSMiddleware` instance (its `send`);
- an error raised by the checks or the use case answered by the app's exception handler for
  it (CORS headers added, as `ExceptionMiddleware` inside CORS does); an unexpected one by the
  server-error handler (no CORS headers, as `ServerErrorMiddleware` outside CORS) and raised
  again for the server to log.

Anything else (another method or path, headers or a body over the limits, another content
type, JSON that does not parse or validate, a client gone mid-body) goes through the stack
untouched, the body it read replayed, so every refusal keeps its exact shape and order.
FastAPI's routes stay registered, so the OpenAPI document does not change.
"""

from __future__ import annotations

import functools
from typing import Any

import orjson
from pydantic import ValidationError
from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from crossfill.api.auth import caller_of
from crossfill.api.limits import RequestLimits
from crossfill.api.rate_limit import rate_limited
from crossfill.api.schemas.quote import QuoteBody
from crossfill.app.quote_answers import quote_answer
from crossfill.runtime import Runtime

PATHS = frozenset({"/quote/v2", "/quote"})

Handler = Any  # Starlette's exception handler: (request, exc) -> response


class QuoteFront:
    """The app's outermost layer: well-formed quotes served here, the rest passed to `stack`
    (the app's middleware stack)."""

    def __init__(
        self,
        stack: ASGIApp,
        *,
        limits: RequestLimits,
        cors: CORSMiddleware,
        exception_handlers: dict[Any, Handler],
    ) -> None:
        self._stack = stack
        self._limits = limits
        self._cors = cors
        self._handlers = {
            key: handler
            for key, handler in exception_handlers.items()
            if isinstance(key, type) and key is not Exception
        }
        self._server_error = exception_handlers.get(Exception) or exception_handlers.get(500)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._takes(scope):
            await self._stack(scope, receive, send)
            return
        messages, body = await self._body(receive)
        document = None if body is None else _well_formed(body)
        if document is None:
            await self._stack(scope, _replaying(messages, receive), send)
            return
        await self._serve(scope, receive, send, document)

    def _takes(self, scope: Scope) -> bool:
        """A POST to a quote path whose headers the stack would let through, JSON declared."""
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or scope["path"] not in PATHS
            or scope.get("root_path")
        ):
            return False
        headers = scope["headers"]
        if self._limits.header_problem(headers) is not None:
            return False
        content_type = b""
        for name, value in headers:
            lowered = name.lower()
            if lowered == b"content-type":
                content_type = value
            elif lowered == b"content-length" and (
                not value.strip().isdigit() or int(value) > self._limits.max_body_bytes
            ):
                return False
        return content_type.split(b";")[0].strip().lower() == b"application/json"

    async def _body(self, receive: Receive) -> tuple[list[Message], bytes | None]:
        """The messages read, and the whole body (None when the client left or the body
        passed the limit: the stack answers those)."""
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return messages, None
            size += len(message.get("body", b""))
            if size > self._limits.max_body_bytes:
                return messages, None
            if not message.get("more_body", False):
                break
        if len(messages) == 1:
            return messages, messages[0].get("body", b"")
        return messages, b"".join(message.get("body", b"") for message in messages)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, body: QuoteBody) -> None:
        request = Request(scope, receive)
        cors_send = functools.partial(
            self._cors.send, send=send, request_headers=Headers(scope=scope)
        )

        try:
            runtime: Runtime = request.app.state.runtime
            caller = await caller_of(request, runtime)
            await rate_limited(request, caller, runtime)
            answer = await quote_answer(runtime, body.to_request(), api_key_id=caller.key_id)
        except Exception as exc:
            handler = self._handler_for(exc)
            if handler is not None:
                response = await handler(request, exc)
                await response(scope, receive, cors_send)
                return
            if self._server_error is not None:
                response = await self._server_error(request, exc)
                await response(scope, receive, send)
            raise
        await cors_send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-length", str(len(answer)).encode()),
                    (b"content-type", b"application/json"),
                ],
            }
        )
        await cors_send({"type": "http.response.body", "body": answer})

    def _handler_for(self, exc: Exception) -> Handler | None:
        for cls in type(exc).__mro__:
            if cls in self._handlers:
                return self._handlers[cls]
        return None


def _well_formed(raw: bytes) -> QuoteBody | None:
    """The body as the model, or None for anything FastAPI's route should answer."""
    if not raw:
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


def _replaying(messages: list[Message], receive: Receive) -> Receive:
    """`receive` for a request whose first messages were read already: those, then what
    follows."""
    pending = list(messages)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay
