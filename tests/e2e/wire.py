"""The service's answers as they cross the wire: checked against the spec's JSON schemas
(`validate_against`), and kept as they came for a client that parses them into models
(`WireLog`, filled by a `RecordingTransport`), so a test of the wire shape still reads the
JSON the service sent."""

from __future__ import annotations

import json
from dataclasses import dataclass

import httpx
import jsonschema
from pydantic import JsonValue

from tests.conftest import SCHEMAS_DIR

SWITCHING_PROTOCOLS = 101


def validate_against(schema_name: str, document: object) -> None:
    schema = json.loads((SCHEMAS_DIR / f"{schema_name}.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(document)


@dataclass(frozen=True)
class Answer:
    """One answer of the service: what was asked (method, path, query) and what came back
    (its status code, its body as JSON; None when the body is not JSON)."""

    method: str
    path: str
    params: httpx.QueryParams
    status_code: int
    body: JsonValue


class WireLog:
    """Every answer the service gave a client, oldest first."""

    def __init__(self) -> None:
        self.answers: list[Answer] = []

    def to(self, path: str) -> list[Answer]:
        """The answers to `path` (no query), oldest first."""
        return [answer for answer in self.answers if answer.path == path]

    def last(self, path: str, **params: str) -> Answer | None:
        """The last answer to `path` whose query has each of `params`."""
        matching = [
            answer
            for answer in self.to(path)
            if all(answer.params.get(name) == value for name, value in params.items())
        ]
        return matching[-1] if matching else None

    def add(self, request: httpx.Request, status_code: int, content: bytes) -> None:
        try:
            body: JsonValue = json.loads(content) if content else None
        except ValueError:
            body = None
        self.answers.append(
            Answer(request.method, request.url.path, request.url.params, status_code, body)
        )


class RecordingTransport(httpx.AsyncBaseTransport):
    """httpx's own transport, each answer read and added to `log`; a websocket upgrade passes
    untouched (its stream is the socket)."""

    def __init__(self, log: WireLog) -> None:
        self.log = log
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if response.status_code != SWITCHING_PROTOCOLS:
            self.log.add(request, response.status_code, await response.aread())
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()
