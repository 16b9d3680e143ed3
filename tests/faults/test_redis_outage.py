"""The rate limiter's Redis goes away (restarted, or cut off silently) under a running limiter:
requests are neither held nor let through unlimited; the process keeps the limits itself until
Redis answers again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest
import redis.asyncio as aioredis

from crossfill.api import rate_limit
from crossfill.api.rate_limit import RedisLimiter
from tests.support.tcp_relay import TcpRelay

REDIS_PORT = 6379
# A Redis database of its own: the suite runs on several workers at once.
DATABASE = 4
BUDGET = 3  # requests per minute
# The limiter answers within its Redis timeout; a wait this long is a hang.
HUNG_SECONDS = 10 * rate_limit.REDIS_TIMEOUT_SECONDS


@pytest.fixture
def relay() -> Iterator[TcpRelay]:
    relay = TcpRelay(REDIS_PORT).start()
    try:
        yield relay
    finally:
        relay.stop()


@pytest.fixture
async def limiter(relay: TcpRelay, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[RedisLimiter]:
    monkeypatch.setattr(rate_limit, "REDIS_RETRY_SECONDS", 0.2)
    direct = aioredis.Redis(port=REDIS_PORT, db=DATABASE)
    await direct.flushdb()
    await direct.aclose()
    limiter = RedisLimiter(f"redis://127.0.0.1:{relay.port}/{DATABASE}")
    try:
        yield limiter
    finally:
        await limiter.close()


async def _takes(limiter: RedisLimiter, bucket: str, count: int) -> list[bool]:
    """Whether each of `count` takes was allowed."""
    allowed = []
    for _ in range(count):
        async with asyncio.timeout(HUNG_SECONDS):
            allowed.append(await limiter.take(bucket, BUDGET) == 0)
    return allowed


@pytest.mark.parametrize("outage", ["restart", "network cut"])
async def test_limits_hold_without_waiting_while_redis_is_away(
    limiter: RedisLimiter, relay: TcpRelay, outage: str
) -> None:
    assert await _takes(limiter, "shared", 1) == [True]
    if outage == "restart":
        relay.drop()
    else:
        relay.stall()
    # Kept by this process: the budget still runs out, and nothing waits on Redis.
    assert await _takes(limiter, "during", BUDGET + 1) == [True] * BUDGET + [False]
    relay.restore()
    await asyncio.sleep(2 * rate_limit.REDIS_RETRY_SECONDS)
    # Redis's bucket again: the take before the outage counted there.
    assert await _takes(limiter, "shared", BUDGET) == [True] * (BUDGET - 1) + [False]
