"""Who is calling: an API key from `x-api-key`, or an anonymous caller by address.

Keys are checked against the database and remembered for a few seconds per process, so a
revoked key stops working within `KEY_CACHE_SECONDS` everywhere.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from crossfill.api.deps import RuntimeDep
from crossfill.errors import Unauthorized
from crossfill.runtime import Runtime
from crossfill.store import api_keys

API_KEY_HEADER = "x-api-key"
KEY_CACHE_SECONDS = 5.0


@dataclass(frozen=True)
class Caller:
    key_id: int | None  # None: anonymous
    address: str  # the client's address, for anonymous rate limits

    @property
    def bucket(self) -> str:
        return f"key:{self.key_id}" if self.key_id is not None else f"ip:{self.address}"


class KeyCache:
    """Presented key hash → key id (None: not a valid key), for a few seconds."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[int | None, float]] = {}

    async def key_id(self, runtime: Runtime, presented: str) -> int | None:
        digest = api_keys.key_hash(presented)
        now = time.monotonic()
        cached = self._entries.get(digest)
        if cached is not None and cached[1] > now:
            return cached[0]
        async with runtime.sessions() as session:
            row = await api_keys.authenticate(session, presented)
        key_id = None if row is None else row.id
        if len(self._entries) > 10_000:
            self._entries.clear()
        self._entries[digest] = (key_id, now + KEY_CACHE_SECONDS)
        return key_id


async def _caller(request: Request, runtime: RuntimeDep) -> Caller:
    address = request.client.host if request.client else "unknown"
    presented = request.headers.get(API_KEY_HEADER)
    if not presented:
        return Caller(None, address)
    cache: KeyCache = request.app.state.key_cache
    key_id = await cache.key_id(runtime, presented)
    if key_id is None:
        raise Unauthorized("Invalid or revoked API key")
    return Caller(key_id, address)


async def _authenticated(caller: Annotated[Caller, Depends(_caller)]) -> Caller:
    if caller.key_id is None:
        raise Unauthorized(f"This endpoint requires an API key in the {API_KEY_HEADER} header")
    return caller


CallerDep = Annotated[Caller, Depends(_caller)]
AuthenticatedDep = Annotated[Caller, Depends(_authenticated)]
