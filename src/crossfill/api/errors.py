"""Every error leaves as JSON `{message, statusCode, ...}`: never HTML, never a bare 500."""

from __future__ import annotations

import structlog
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from crossfill.errors import ApiError

log = structlog.get_logger(__name__)


def error_response(status_code: int, message: str, **extra: object) -> JSONResponse:
    return JSONResponse({"message": message, "statusCode": status_code, **extra}, status_code)


def _describe(error: dict[str, object]) -> str:
    location = error.get("loc", ())
    assert isinstance(location, tuple | list)
    where = ".".join(str(part) for part in location if part not in ("body",)) or "request"
    return f"{where}: {error.get('msg')}"


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = "; ".join(_describe(error) for error in exc.errors())
    return error_response(400, f"Invalid request: {problems}")


async def _http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    response = error_response(exc.status_code, str(exc.detail))
    if exc.headers:
        response.headers.update(exc.headers)
    return response


async def _api_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return JSONResponse(exc.body(), exc.status_code, headers=exc.headers())


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", path=request.url.path, exc_info=exc)
    return error_response(500, "Internal server error", errorCode="UNKNOWN_ERROR")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(Exception, _unexpected)
