"""Token-bucket rate limits: per API key, and per client address for anonymous callers.

A bucket holds up to a minute's budget and refills continuously. In-process by default; with
`CROSSFILL_REDIS_URL` the buckets live in Redis (one atomic script per request, timed by the
Redis server's clock), so several API processes share one budget. Rate limiting must not
take the API down, nor slow it: when Redis fails or has not answered within
`REDIS_TIMEOUT_SECONDS`, this process keeps the limits by itself (each process then allows a
whole budget) for `REDIS_RETRY_SECONDS` before trying Redis again; the outage and the return
are logged once each.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Protocol

import redis.asyncio as aioredis
import structlog
from fastapi import Depends, Request
from redis.commands.core import AsyncScript
from redis.exceptions import RedisError

from crossfill.api.auth import Caller, CallerDep
from crossfill.api.deps import RuntimeDep
from crossfill.errors import TooManyRequests
from crossfill.settings import Settings

log = structlog.get_logger(__name__)

# A bucket script answers in well under a millisecond; a Redis silent this long is down
# (redis-py's own default waited 5 s, and every request waited with it).
REDIS_TIMEOUT_SECONDS = 0.5
# After a failure, this long on this process's own buckets before Redis is asked again.
REDIS_RETRY_SECONDS = 5.0

# KEYS[1] bucket; ARGV: capacity, refill per second. Returns milliseconds to wait (0: taken).
_TAKE_SCRIPT = """
local capacity = tonumber(ARGV[1])
local per_second = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) * per_second)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) / per_second * 1000)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / per_second * 1000) + 1000)
return wait
"""
# The same bucket read without taking: milliseconds until a token is there (0: one is).
_PEEK_SCRIPT = """
local per_second = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
if not state[1] then
  return 0
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local tokens = tonumber(state[1]) + math.max(0, now - tonumber(state[2])) * per_second
if tokens >= 1 then
  return 0
end
return math.ceil((1 - tokens) / per_second * 1000)
"""


class Limiter(Protocol):
    async def take(self, bucket: str, per_minute: int) -> float:
        """Take one token; 0 when allowed, else the seconds until one is available."""

    async def wait(self, bucket: str, per_minute: int) -> float:
        """The seconds until a token is available (0: one is), taking none."""

    async def close(self) -> None: ...


class LocalLimiter:
    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}

    async def take(self, bucket: str, per_minute: int) -> float:
        tokens, now = self._tokens(bucket, per_minute)
        if tokens >= 1:
            self._buckets[bucket] = (tokens - 1, now)
            return 0.0
        self._buckets[bucket] = (tokens, now)
        return (1 - tokens) / (per_minute / 60)

    async def wait(self, bucket: str, per_minute: int) -> float:
        tokens, _now = self._tokens(bucket, per_minute)
        return 0.0 if tokens >= 1 else (1 - tokens) / (per_minute / 60)

    def _tokens(self, bucket: str, per_minute: int) -> tuple[float, float]:
        """The bucket's tokens now (refilled since last seen), and now."""
        now = time.monotonic()
        tokens, at = self._buckets.get(bucket, (float(per_minute), now))
        return min(float(per_minute), tokens + (now - at) * per_minute / 60), now

    async def close(self) -> None:
        self._buckets.clear()


class RedisLimiter:
    def __init__(self, url: str, *, namespace: str = "crossfill:ratelimit:") -> None:
        self._redis = aioredis.from_url(
            url,
            socket_timeout=REDIS_TIMEOUT_SECONDS,
            socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
        )
        self._take = self._redis.register_script(_TAKE_SCRIPT)
        self._peek = self._redis.register_script(_PEEK_SCRIPT)
        self._namespace = namespace
        self._local = LocalLimiter()  # while Redis is down
        self._down_until: float | None = None

    async def take(self, bucket: str, per_minute: int) -> float:
        return await self._shared_or_local(self._take, self._local.take, bucket, per_minute)

    async def wait(self, bucket: str, per_minute: int) -> float:
        return await self._shared_or_local(self._peek, self._local.wait, bucket, per_minute)

    async def _shared_or_local(
        self,
        script: AsyncScript,
        local: Callable[[str, int], Awaitable[float]],
        bucket: str,
        per_minute: int,
    ) -> float:
        """Redis's bucket; this process's own while Redis is down."""
        if self._down_until is None or time.monotonic() >= self._down_until:
            wait = await self._run(script, bucket, per_minute)
            if wait is not None:
                return wait
        return await local(bucket, per_minute)

    async def _run(self, script: AsyncScript, bucket: str, per_minute: int) -> float | None:
        """Seconds to wait by Redis's bucket; None when Redis failed."""
        try:
            wait_ms = await script(
                keys=[self._namespace + bucket], args=[per_minute, per_minute / 60]
            )
        except RedisError as exc:
            if self._down_until is None:
                log.warning(
                    "rate limiter's Redis unavailable; limits kept per process",
                    error=str(exc),
                    retry_in_seconds=REDIS_RETRY_SECONDS,
                )
            self._down_until = time.monotonic() + REDIS_RETRY_SECONDS
            return None
        if self._down_until is not None:
            log.info("rate limiter's Redis back; limits shared again")
            self._down_until = None
        return int(wait_ms) / 1000

    async def close(self) -> None:
        await self._redis.aclose()


def build_limiter(redis_url: str | None) -> Limiter:
    return RedisLimiter(redis_url) if redis_url else LocalLimiter()


async def enforce(limiter: Limiter, bucket: str, per_minute: int, message: str) -> None:
    """Raise 429 (with Retry-After) when the bucket is empty; `per_minute` 0 means no limit."""
    if per_minute <= 0:
        return
    wait = await limiter.take(bucket, per_minute)
    if wait > 0:
        raise TooManyRequests(message, retry_after_seconds=wait)


def budget(settings: Settings, caller: Caller) -> int:
    """The caller's requests per minute: keys get more than anonymous callers."""
    if caller.key_id is not None:
        return settings.rate_limit_key_per_minute
    return settings.rate_limit_anonymous_per_minute


async def rate_limited(request: Request, caller: CallerDep, runtime: RuntimeDep) -> Caller:
    limiter: Limiter = request.app.state.limiter
    per_minute = budget(runtime.settings, caller)
    await enforce(limiter, caller.bucket, per_minute, "Rate limit exceeded; retry later")
    return caller


RateLimited = Depends(rate_limited)
