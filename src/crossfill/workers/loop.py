"""The loop every worker runs: tick, report failures, wait, go on."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import structlog

from crossfill.errors import ChainError

log = structlog.get_logger(__name__)


async def run_forever(
    name: str, tick: Callable[[], Awaitable[None]], wait: Callable[[], Awaitable[None]]
) -> None:
    """A chain hiccup is a warning; anything else is a bug, logged loudly. Neither stops the loop:
    one bad record must not halt fills or refunds for a whole chain."""
    while True:
        try:
            await tick()
        except ChainError as exc:
            log.warning("worker tick failed", worker=name, error=str(exc))
        except Exception:
            log.exception("worker tick crashed", worker=name)
        await wait()


async def wait_interval(wakeup: asyncio.Event, interval_seconds: float) -> None:
    """Wait out the interval, or less if someone sets `wakeup` (work is waiting); then clear it."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(wakeup.wait(), interval_seconds)
    wakeup.clear()
