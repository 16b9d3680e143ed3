"""The loop every worker runs: tick, report failures, wait, go on."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import structlog
from sqlalchemy.exc import SQLAlchemyError

from crossfill.domain.backoff import Backoff
from crossfill.errors import ChainError, RateLimited, SignerBusy, StoreError
from crossfill.first_on_loop import fill_path

# Failures that say nothing about the item itself: retried, never a reason to give it up.
TRANSIENT: tuple[type[BaseException], ...] = (
    ChainError,
    StoreError,
    SignerBusy,
    SQLAlchemyError,
    OSError,
)

log = structlog.get_logger(__name__)
Item = TypeVar("Item")


# A poller whose ticks find nothing waits its interval, then twice, then this many times over
# (`run_forever(..., stretch_when_quiet=True)`); a tick that finds work, or a wakeup, ends that.
QUIET_WAITS_AT_MOST = 4


@dataclass
class _Tick:
    found: bool = False


# The running tick of a loop that stretches its quiet waits: `each_on_its_own` notes items.
_CURRENT_TICK: ContextVar[_Tick | None] = ContextVar("crossfill_current_tick", default=None)


async def run_forever(
    name: str,
    tick: Callable[[], Awaitable[None]],
    wait: Callable[[], Awaitable[bool | None]],
    *,
    backoff: Backoff | None = None,
    stretch_when_quiet: bool = False,
    goes_first: bool = False,
) -> None:
    """A chain or database hiccup is a warning; anything else is a bug, logged loudly. Neither
    stops the loop: one bad record must not halt fills or refunds for a whole chain. Failed
    ticks back off (exponentially, with jitter, honouring a node's Retry-After) instead of
    retrying at once, and an outage is logged on its 1st, 2nd, 4th... failure, not on each.

    `wait` answers True when it was cut short by a wakeup (work is waiting). With
    `stretch_when_quiet`, after ticks that handed no item to `each_on_its_own` the loop waits
    2, then up to `QUIET_WAITS_AT_MOST`, times in a row before the next tick (a wakeup still
    ticks at once): an idle poller's queries cost a shared event loop less. Only for pollers
    whose work is all handed out through `each_on_its_own`.

    Each tick starts after the fill path's work under way, if any (`first_on_loop`), unless
    the loop is that work (`goes_first`: the indexers)."""
    backoff = backoff or Backoff()
    quiet_ticks = 0
    while True:
        if not goes_first:
            await fill_path().after()
        current = _Tick()
        token = _CURRENT_TICK.set(current if stretch_when_quiet else None)
        try:
            await tick()
        except SignerBusy:
            # Another process holds the key: no failure, so no backoff; its lease is watched
            # (`kinds.evm.signer_keeper`) and the next tick comes at the usual interval.
            await wait()
            continue
        except TRANSIENT as exc:
            retry_after = exc.retry_after_seconds if isinstance(exc, RateLimited) else None
            delay = backoff.failed(at_least=retry_after)
            if backoff.worth_logging:
                log.warning(
                    "worker tick failed",
                    worker=name,
                    error=str(exc),
                    failures=backoff.failures,
                    retry_in_seconds=round(delay, 2),
                )
            await asyncio.sleep(delay)
            continue
        except Exception:
            log.exception("worker tick crashed", worker=name)
            await asyncio.sleep(backoff.failed())
            continue
        finally:
            _CURRENT_TICK.reset(token)
        if backoff.failures:
            log.info("worker recovered", worker=name, after_failures=backoff.failures)
            backoff.succeeded()
        quiet_ticks = 0 if current.found or not stretch_when_quiet else quiet_ticks + 1
        for _ in range(min(2**quiet_ticks, QUIET_WAITS_AT_MOST) if quiet_ticks else 1):
            if await wait():
                quiet_ticks = 0
                break


async def run_every(
    name: str,
    tick: Callable[[], Awaitable[None]],
    interval_seconds: float,
    *,
    stretch_when_quiet: bool = False,
) -> None:
    """`run_forever` waiting its interval between ticks: a poller that nothing wakes."""
    await run_forever(
        name,
        tick,
        lambda: asyncio.sleep(interval_seconds),
        stretch_when_quiet=stretch_when_quiet,
    )


async def set_within(event: asyncio.Event, seconds: float) -> bool:
    """Wait until `event` is set, at most `seconds`; True if it was set.

    Not `asyncio.wait_for`: before Python 3.12 it returns the inner result when the event fires
    in the same loop iteration as the waiting task is cancelled, and the cancellation is lost.
    A worker woken as it is being stopped would then run on, and the process would never exit
    (`tests/unit/test_cancelled_waits.py`). `asyncio.timeout` keeps every cancellation."""
    try:
        async with asyncio.timeout(seconds):
            await event.wait()
    except TimeoutError:
        return False
    return True


async def wait_interval(wakeup: asyncio.Event, interval_seconds: float) -> bool:
    """Wait out the interval, or less if someone sets `wakeup` (work is waiting); then clear it.
    True when woken."""
    woken = await set_within(wakeup, interval_seconds)
    wakeup.clear()
    return woken


# How long a stopped task has to end before it is cancelled again.
RECANCEL_AFTER_SECONDS = 1.0


async def stop_tasks(tasks: Iterable[asyncio.Task[Any]]) -> None:
    """Cancel `tasks` and return once every one has ended; one that had failed is logged. A
    task that runs on (a library swallowed the cancellation, as 3.11's `asyncio.wait_for` can) is
    cancelled again each `RECANCEL_AFTER_SECONDS`: a stop never waits forever on one task."""
    stopping = list(tasks)
    running = {task for task in stopping if not task.done()}
    for task in running:
        task.cancel()
    while running:
        _, running = await asyncio.wait(running, timeout=RECANCEL_AFTER_SECONDS)
        for task in running:
            log.warning("task ran on after being stopped; cancelled again", task=task.get_name())
            task.cancel()
    for task in stopping:
        failure = None if task.cancelled() else task.exception()
        if failure is not None:
            log.error("task had failed before its stop", task=task.get_name(), exc_info=failure)


class Wakeups(Protocol):
    """Where a worker registers the event that work stored in this process sets."""

    def register(self, waiter: asyncio.Event) -> None: ...

    def unregister(self, waiter: asyncio.Event) -> None: ...


async def run_until_woken(
    name: str,
    tick: Callable[[], Awaitable[None]],
    wakeups: Wakeups,
    interval_seconds: float,
    *,
    stretch_when_quiet: bool = False,
) -> None:
    """`run_forever` waiting its interval, cut short when `wakeups` fires: work this process
    stores is picked up at once; polling stays for work stored by another process."""
    wakeup = asyncio.Event()
    wakeups.register(wakeup)
    try:
        await run_forever(
            name,
            tick,
            lambda: wait_interval(wakeup, interval_seconds),
            stretch_when_quiet=stretch_when_quiet,
        )
    finally:
        wakeups.unregister(wakeup)


async def each_on_its_own(
    name: str,
    items: Iterable[Item],
    act: Callable[[Item], Awaitable[None]],
    *,
    label: Callable[[Item], object],
    on_crash: Callable[[Item], Awaitable[None]] | None = None,
) -> None:
    """`act` on every item, each isolated from the others. A transient failure (chain,
    database, network) is a warning and the item is retried on a later tick; anything else
    is a crash, logged and handed to `on_crash` (which may give the item up). Either way the
    next item goes on: one poisoned record must not hold up the rest. But an endpoint that
    answers 429 asks for fewer calls, whichever item makes them: that ends the tick (raised),
    for the loop's backoff and the endpoint's Retry-After instead of a call per item."""
    for item in items:
        current = _CURRENT_TICK.get()
        if current is not None:
            current.found = True
        try:
            await act(item)
        except RateLimited:
            raise
        except TRANSIENT as exc:
            log.warning("worker item failed", worker=name, item=label(item), error=str(exc))
        except Exception:
            log.exception("worker item crashed", worker=name, item=label(item))
            if on_crash is None:
                continue
            try:
                await on_crash(item)
            except Exception:
                log.exception("worker could not give an item up", worker=name, item=label(item))
