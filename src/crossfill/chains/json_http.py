"""JSON posted over HTTP to one service (the SVM node's JSON-RPC, the perps exchange's API), on
an httpx client whose transport is injectable (`httpx.MockTransport` in unit tests).

A POST answers the reply's JSON or raises a typed outcome: `ChainUnreachable` when no reply
came (connection refused, timeout) or it says the service failed (HTTP 5xx), `RateLimited`
(HTTP 429, `http_failures`), `ChainError` when the reply is no JSON.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, Self

import httpx

from crossfill.chains.http_failures import service_failure
from crossfill.errors import ChainError, ChainUnreachable
from crossfill.settings import Settings
from crossfill.types import ChainId


class Served(Protocol):
    """A configured chain, as its client is made for it."""

    @property
    def id(self) -> ChainId: ...

    @property
    def rpc_url(self) -> str: ...


class JsonOverHttp:
    """A chain kind's client of one service at `url`, for `chain_id`."""

    # Who answers, as a failure names it ("the node", "the exchange").
    service: ClassVar[str]
    # Whether only an HTTP 200 carries an answer (else the reply is read as JSON, whatever
    # its status: a JSON-RPC node answers some errors in the body of a 4xx).
    answers_only_with_200: ClassVar[bool] = False

    def __init__(
        self,
        chain_id: ChainId,
        url: str,
        *,
        timeout_seconds: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.chain_id = chain_id
        self._http = httpx.AsyncClient(timeout=timeout_seconds, transport=transport)
        self._url = url

    @classmethod
    def serving(cls, config: Served, settings: Settings) -> Self:
        """The client of a configured chain, waiting for each reply as the settings say."""
        return cls(config.id, config.rpc_url, timeout_seconds=settings.rpc_timeout_seconds)

    async def _post_json(self, url: str, body: Any, what: str) -> Any:
        """The JSON answer to `body` posted to `url`; failures name `what` was asked."""
        try:
            reply = await self._http.post(url, json=body)
        except httpx.TransportError as exc:
            raise ChainUnreachable(f"{what}: {type(exc).__name__}") from exc
        failure = service_failure(reply.status_code, reply.headers, what)
        if failure is not None:
            raise failure
        if self.answers_only_with_200 and reply.status_code != 200:
            raise ChainError(f"{what}: HTTP {reply.status_code}: {reply.text[:200]}")
        try:
            return reply.json()
        except ValueError as exc:
            raise ChainError(f"{what}: {self.service} answered no JSON") from exc

    async def close(self) -> None:
        await self._http.aclose()
