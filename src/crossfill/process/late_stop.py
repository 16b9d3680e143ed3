"""What a stopping process still waits for, logged if it has not stopped in time.

A process asked to stop (SIGINT, SIGTERM) closes its connections, stops its workers and closes
its chains' clients and the database. Should one of those awaits never end, the process stays
up with its event loop idle, and nothing says why: a thread dump shows only the loop waiting.
Twice a process was seen so (a fresh clone's CI run, and a benchmark's devnet after load), and
neither could be made to happen again. So from `LATE_AFTER_SECONDS` into a stop, every task
still pending is logged with the chain of awaits it is suspended in, down to the future it
waits for; the log then names the await to fix. Killing the process stays safe whenever it
happens (docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import structlog

log = structlog.get_logger(__name__)

LATE_AFTER_SECONDS = 20.0
# Awaits followed down from a task's coroutine, at most.
_DEPTH = 40


def awaiting(task: asyncio.Task[Any]) -> list[str]:
    """Where `task` is suspended: each coroutine or generator of its chain of awaits as
    `function (file:line)`, outermost first, then what the innermost waits on."""
    chain: list[str] = []
    awaited: Any = task.get_coro()
    for _ in range(_DEPTH):
        frame: FrameType | None = getattr(awaited, "cr_frame", None) or getattr(
            awaited, "gi_frame", None
        )
        if frame is None:
            break
        code = frame.f_code
        chain.append(f"{code.co_name} ({code.co_filename}:{frame.f_lineno})")
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    # The future the task is blocked on (the innermost await holds only an iterator over it).
    waited_on = getattr(task, "_fut_waiter", None) or awaited
    if waited_on is not None:
        chain.append(f"waits on {waited_on!r}"[:300])
    return chain


def _log_pending(loop: asyncio.AbstractEventLoop, seconds: float) -> None:
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    log.error(
        "stop is late",
        seconds=seconds,
        pending_tasks={task.get_name(): awaiting(task) for task in pending},
    )


@contextlib.contextmanager
def reported_if_late(
    *,
    after_seconds: float = LATE_AFTER_SECONDS,
    report: Callable[[asyncio.AbstractEventLoop, float], None] = _log_pending,
) -> Iterator[None]:
    """Around a stop, on its event loop: `report` runs on the loop once `after_seconds` have
    passed inside this block (the loop is idle then, its tasks waiting)."""
    loop = asyncio.get_running_loop()

    def late() -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: the stop ended
            loop.call_soon_threadsafe(report, loop, after_seconds)

    timer = threading.Timer(after_seconds, late)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
