"""HTTP with the retry policy, for the service and for chain nodes alike; the service's error
answers raised as the client's exceptions and its answers read into models."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypedDict, TypeVar, Unpack

import httpx
from pydantic import BaseModel, ValidationError

from crossfill_client._error_mapping import ErrorFamily, api_error
from crossfill_client._retry import Failure, RetryPolicy, failure_of_status, retry_after_seconds
from crossfill_client.errors import ResponseError, TransportError

Model = TypeVar("Model", bound=BaseModel)
Sleep = Callable[[float], Awaitable[None]]
# The request never reached the peer: nothing can have acted on it.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


async def send_with_retries(
    http: httpx.AsyncClient,
    request: httpx.Request,
    policy: RetryPolicy,
    *,
    idempotent: bool,
    sleep: Sleep = asyncio.sleep,
) -> httpx.Response:
    """The answer to `request`, tried again as `policy` allows; the last answer when it stays
    an error. A connection that fails on every try is a `TransportError`."""
    attempt = 1
    while True:
        try:
            response = await http.send(request)
        except httpx.TransportError as exc:
            sent = not isinstance(exc, _NOT_SENT)
            failure = Failure.CONNECTION_LOST if sent else Failure.NOT_CONNECTED
            delay = policy.delay(attempt, failure, idempotent=idempotent)
            if delay is None:
                raise TransportError(f"{request.method} {request.url}: {exc!r}") from exc
        else:
            status_failure = failure_of_status(response.status_code)
            if status_failure is None:
                return response
            retry_after = retry_after_seconds(response.headers.get("retry-after"))
            delay = policy.delay(
                attempt, status_failure, idempotent=idempotent, retry_after=retry_after
            )
            if delay is None:
                return response
        await sleep(delay)
        attempt += 1


class CallOptions(TypedDict, total=False):
    """How one call is made: which error shape its path answers (`family`, default generic),
    whether it is safe to repeat (`idempotent`, default True), its query and JSON body."""

    family: ErrorFamily
    idempotent: bool
    params: dict[str, str] | None
    json: object


def parsed(model: type[Model], content: bytes) -> Model:
    """`content` read as `model`; a `ResponseError` when it is not that shape."""
    try:
        return model.model_validate_json(content)
    except ValidationError as exc:
        raise ResponseError(f"not a {model.__name__}: {exc}") from exc


class ServiceHttp:
    """The service's HTTP API: its base URL, the API key (sent as `x-api-key` when given), the
    retry policy; `transport` is a seam for tests (an `httpx.MockTransport`)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None,
        timeout: float,
        retry: RetryPolicy,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        headers = {"x-api-key": api_key} if api_key else {}
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.retry = retry
        self.sleep = sleep
        self.http = httpx.AsyncClient(
            base_url=self.base_url, headers=headers, timeout=timeout, transport=transport
        )

    async def call(self, method: str, path: str, **options: Unpack[CallOptions]) -> bytes:
        """The body of a successful answer; an error answer raised as its family's error."""
        request = self.http.build_request(
            method, path, params=options.get("params"), json=options.get("json")
        )
        response = await send_with_retries(
            self.http,
            request,
            self.retry,
            idempotent=options.get("idempotent", True),
            sleep=self.sleep,
        )
        if response.status_code >= 400:
            family = options.get("family", ErrorFamily.GENERIC)
            retry_after = retry_after_seconds(response.headers.get("retry-after"))
            raise api_error(family, response.status_code, response.content, retry_after=retry_after)
        return response.content

    async def read(
        self, model: type[Model], method: str, path: str, **options: Unpack[CallOptions]
    ) -> Model:
        """`call`, its answer read as `model`."""
        return parsed(model, await self.call(method, path, **options))

    async def aclose(self) -> None:
        await self.http.aclose()
