"""Every error leaves as JSON `{message, statusCode, ...}`, never a bare 500; under the paths
of pages for people (the explorer's, see `ErrorPages`) it leaves as that page's error page.

A request the database (or a chain's RPC) failed under, by being unreachable or dropping the
connection, is answered 503 with `Retry-After`, logged in one line: it says nothing about the
request, and a 500 would also have closed the client's kept-alive connection.

On POST /execute the spec's error body is `{error}`: there it also carries `error` (the same
text as `message`), whatever raised it.

Under /oif/ (the Open Intents Framework's endpoints) every error is OIF's shape instead:
`{error: code, message, details?}`.

On the quote paths (and /price, their preview) every error also carries an `errorCode`
(clients branch on it): errors raised without one (body validation, 405, size limits, rate
limits) get the code of their status from `QUOTE_FALLBACK_CODES`. An unexpected failure (500)
carries a `requestId`, the id it is logged under; a quote refused by simulating it carries the
Detailed shape (`quoting.errors.QuoteSimulationFailed`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Protocol

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from crossfill.api.openapi import documented_methods
from crossfill.errors import ApiError, ChainError
from crossfill.log_throttle import LogThrottle
from crossfill.store.db import UNAVAILABLE

log = structlog.get_logger(__name__)

QUOTE_PATHS = frozenset({"/quote", "/quote/v2", "/price"})
ERROR_FIELD_PATHS = frozenset({"/execute"})
# The compat notes' codes where one fits; the rest name the HTTP condition.
QUOTE_FALLBACK_CODES = {
    400: "INVALID_INPUT",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    408: "REQUEST_TIMEOUT",
    413: "REQUEST_TOO_LARGE",
    429: "RATE_LIMITED",
    431: "REQUEST_HEADERS_TOO_LARGE",
    500: "UNKNOWN_ERROR",
    503: "SERVICE_UNAVAILABLE",
}


# The Open Intents Framework's paths answer its error shape, `{error, message, details?}`:
# `error` the error's code, else the code of its status.
OIF_PREFIX = "/oif/"
OIF_FALLBACK_CODES = {
    **QUOTE_FALLBACK_CODES,
    400: "INVALID_REQUEST",
    409: "CONFLICT",
    422: "UNPROCESSABLE",
    500: "INTERNAL_ERROR",
}


def oif_shaped(body: dict[str, object]) -> dict[str, object]:
    """A Crossfill error body in OIF's shape: its code as `error`, its other fields (a 500's
    `requestId`, a simulation's data) as `details`."""
    status_code = body.get("statusCode")
    code = body.get("errorCode") or OIF_FALLBACK_CODES.get(
        status_code if isinstance(status_code, int) else 500, "ERROR"
    )
    shaped: dict[str, object] = {"error": code, "message": body.get("message")}
    details = {
        name: value
        for name, value in body.items()
        if name not in ("message", "statusCode", "errorCode", "error")
    }
    if details:
        shaped["details"] = details
    return shaped


def with_quote_code(path: str, body: dict[str, object]) -> dict[str, object]:
    """`body` with an `errorCode` when `path` is a quote path (the code of its status), and
    with `error` when `path` answers errors as `{error}`; OIF's shape on OIF's paths."""
    if path.startswith(OIF_PREFIX):
        return oif_shaped(body)
    if path in ERROR_FIELD_PATHS:
        body["error"] = body.get("message")
    if path in QUOTE_PATHS and body.get("errorCode") is None:
        status_code = body.get("statusCode")
        body["errorCode"] = QUOTE_FALLBACK_CODES.get(
            status_code if isinstance(status_code, int) else 500, "UNKNOWN_ERROR"
        )
    return body


def error_body(path: str, status_code: int, message: str, **extra: object) -> dict[str, object]:
    """The spec's error shape; on a quote path, with an `errorCode` whatever raised it."""
    return with_quote_code(path, {"message": message, "statusCode": status_code, **extra})


class ErrorResponse(JSONResponse):
    """An error body. Its message may name what the client sent, and JSON lets a client send a
    lone surrogate (`"\\ud800"`), which UTF-8 cannot encode: such a character is written as `?`
    rather than failing the answer (a 500)."""

    def render(self, content: object) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8", "replace")


class ErrorPage(Protocol):
    """An error as a page for people to read (HTML), for the paths a set of pages serves."""

    def __call__(self, request: Request, status_code: int, message: str) -> Response: ...


# Path prefix -> the error page of the pages served under it (`app.state.error_pages`).
ErrorPages = Mapping[str, ErrorPage]


def _error_page(request: Request) -> ErrorPage | None:
    pages: ErrorPages = getattr(request.app.state, "error_pages", {})
    path = request.url.path
    return next(
        (page for prefix, page in pages.items() if path == prefix or path.startswith(prefix + "/")),
        None,
    )


def error_response(request: Request, status_code: int, message: str, **extra: object) -> Response:
    page = _error_page(request)
    if page is not None:
        return page(request, status_code, message)
    return ErrorResponse(error_body(request.url.path, status_code, message, **extra), status_code)


def _describe(error: dict[str, object]) -> str:
    location = error.get("loc", ())
    assert isinstance(location, tuple | list)
    where = ".".join(str(part) for part in location if part not in ("body",)) or "request"
    return f"{where}: {error.get('msg')}"


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    problems = "; ".join(_describe(error) for error in exc.errors())
    return error_response(request, 400, f"Invalid request: {problems}")


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    response = error_response(request, exc.status_code, str(exc.detail))
    if exc.headers:
        response.headers.update(exc.headers)
    if exc.status_code == 405 and (methods := documented_methods(request.app, request.url.path)):
        response.headers["Allow"] = ", ".join(methods)
    return response


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    page = _error_page(request)
    if page is not None:
        response = page(request, exc.status_code, exc.message)
        response.headers.update(exc.headers())
        return response
    body = with_quote_code(request.url.path, exc.body())
    return ErrorResponse(body, exc.status_code, headers=exc.headers())


# What a client is told to wait before retrying a request a backing service failed.
UNAVAILABLE_RETRY_AFTER_SECONDS = 1


_UNAVAILABLE_LOG = LogThrottle()


async def _unavailable(request: Request, exc: Exception) -> Response:
    backend = "a chain's RPC" if isinstance(exc, ChainError) else "the database"
    held_back = _UNAVAILABLE_LOG.let_through(backend)
    if held_back is not None:
        log.warning(
            "request failed: backend unavailable",
            path=request.url.path,
            backend=backend,
            error=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__,
            like_it_since_last_entry=held_back,
        )
    response = error_response(request, 503, f"{backend} did not answer; try again")
    response.headers["Retry-After"] = str(UNAVAILABLE_RETRY_AFTER_SECONDS)
    return response


async def _unexpected(request: Request, exc: Exception) -> Response:
    # The id in the answer is the one in the log: a client reporting it finds the traceback.
    request_id = "0x" + os.urandom(32).hex()
    log.exception("unhandled error", path=request.url.path, request_id=request_id, exc_info=exc)
    return error_response(
        request, 500, "Internal server error", errorCode="UNKNOWN_ERROR", requestId=request_id
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(ApiError, _api_error)
    for unavailable in UNAVAILABLE:
        app.add_exception_handler(unavailable, _unavailable)
    app.add_exception_handler(Exception, _unexpected)
