"""Who is calling: an API key from `x-api-key`, or an anonymous caller by address.

Keys are checked against the database and remembered for a few seconds per process, so a
revoked key stops working within `KEY_CACHE_SECONDS` everywhere. Wrong keys are counted per
client address (`CROSSFILL_RATE_LIMIT_BAD_KEY_PER_MINUTE`): once an address has spent that
budget, every key it presents, right or wrong, is answered 429 until the bucket refills, so
a guess that happens to be right is not told apart from the wrong ones.
"""

from __future__ import annotations

import hmac
import time
from dataclasses import dataclass
from ipaddress import ip_address
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Request
from starlette.requests import HTTPConnection

from crossfill.api.client_address import client_address, client_group
from crossfill.api.deps import RuntimeDep
from crossfill.errors import TooManyRequests, Unauthorized
from crossfill.runtime import Runtime
from crossfill.store import api_keys

if TYPE_CHECKING:  # rate_limit depends on this module's Caller
    from crossfill.api.rate_limit import Limiter

API_KEY_HEADER = "x-api-key"
KEY_CACHE_SECONDS = 5.0


@dataclass(frozen=True)
class Caller:
    key_id: int | None  # None: anonymous
    address: str  # the client's address, for anonymous rate limits

    @property
    def bucket(self) -> str:
        """Whose budgets the call spends: its key's, else its address group's."""
        if self.key_id is not None:
            return f"key:{self.key_id}"
        return f"ip:{client_group(self.address)}"


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


@dataclass(frozen=True)
class GuessGuard:
    """Wrong secrets (API keys, the operator token) presented from one client address, in one
    bucket of `CROSSFILL_RATE_LIMIT_BAD_KEY_PER_MINUTE`. Once it is empty, every secret from
    that address is refused, right or wrong: the answer must not tell which guess was right."""

    limiter: Limiter
    per_minute: int  # 0: no limit
    bucket: str

    @classmethod
    def of(cls, connection: HTTPConnection, runtime: Runtime, address: str) -> GuessGuard:
        per_minute = runtime.settings.rate_limit_bad_key_per_minute
        bucket = f"bad-key:{client_group(address)}"
        return cls(connection.app.state.limiter, per_minute, bucket)

    async def refuse_if_spent(self) -> None:
        """429 when this address has no wrong guess left; call before checking a secret."""
        if self.per_minute > 0:
            self._refuse(await self.limiter.wait(self.bucket, self.per_minute))

    async def count_wrong(self) -> None:
        """Spend one wrong guess (429 if another request spent the last one meanwhile)."""
        if self.per_minute > 0:
            self._refuse(await self.limiter.take(self.bucket, self.per_minute))

    @staticmethod
    def _refuse(wait_seconds: float) -> None:
        if wait_seconds > 0:
            raise TooManyRequests(
                "Too many invalid API keys or operator tokens from this address; retry later",
                retry_after_seconds=wait_seconds,
            )


async def presented_key_id(
    connection: HTTPConnection, runtime: Runtime, address: str, presented: str
) -> int:
    """The id of the key `presented` from `address`: Unauthorized when it is not a valid key,
    TooManyRequests (for any key) once `address` has spent its wrong-guess budget."""
    guard = GuessGuard.of(connection, runtime, address)
    await guard.refuse_if_spent()
    cache: KeyCache = connection.app.state.key_cache
    key_id = await cache.key_id(runtime, presented)
    if key_id is None:
        await guard.count_wrong()
        raise Unauthorized("Invalid or revoked API key")
    return key_id


async def require_bearer(request: Request, runtime: Runtime, token: str, refusal: str) -> None:
    """`Authorization: Bearer <token>` or Unauthorized(`refusal`). A wrong token spends one of
    the client address's guesses (GuessGuard); a request without the header does not."""
    authorization = request.headers.get("authorization")
    address = client_address(request, runtime.settings.trusted_proxies)
    guard = GuessGuard.of(request, runtime, address)
    await guard.refuse_if_spent()
    scheme, _, presented = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(presented.encode(), token.encode()):
        if authorization:
            await guard.count_wrong()
        raise Unauthorized(refusal)


async def caller_of(request: Request, runtime: RuntimeDep) -> Caller:
    address = client_address(request, runtime.settings.trusted_proxies)
    presented = request.headers.get(API_KEY_HEADER)
    if not presented:
        return Caller(None, address)
    return Caller(await presented_key_id(request, runtime, address, presented), address)


async def _authenticated(caller: Annotated[Caller, Depends(caller_of)]) -> Caller:
    if caller.key_id is None:
        raise Unauthorized(f"This endpoint requires an API key in the {API_KEY_HEADER} header")
    return caller


def _keyless_execute_allowed(address: str, runtime: Runtime) -> bool:
    settings = runtime.settings
    if settings.keyless_execute_key_id is None:
        return False
    try:
        parsed = ip_address(address)
    except ValueError:
        return False
    return any(parsed in network for network in settings.keyless_execute_clients)


async def _executing(caller: Annotated[Caller, Depends(caller_of)], runtime: RuntimeDep) -> Caller:
    """POST /execute's caller: its API key, or without one, from a client address the operator
    listed (`CROSSFILL_KEYLESS_EXECUTE_CLIENTS`), the key the operator named for those."""
    if caller.key_id is None and _keyless_execute_allowed(caller.address, runtime):
        return Caller(runtime.settings.keyless_execute_key_id, caller.address)
    return await _authenticated(caller)


CallerDep = Annotated[Caller, Depends(caller_of)]
AuthenticatedDep = Annotated[Caller, Depends(_authenticated)]
ExecutingDep = Annotated[Caller, Depends(_executing)]
