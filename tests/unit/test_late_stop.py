"""A stop that takes too long logs each pending task's chain of awaits."""

from __future__ import annotations

import asyncio

from structlog.testing import capture_logs

from crossfill.process.late_stop import _log_pending, awaiting, reported_if_late


async def _inner(never: asyncio.Future[None]) -> None:
    await never


async def _outer(never: asyncio.Future[None]) -> None:
    await _inner(never)


async def test_a_tasks_awaits_are_followed_down_to_the_future_it_waits_on() -> None:
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(_outer(never), name="stuck")
    await asyncio.sleep(0)
    try:
        chain = awaiting(task)
    finally:
        task.cancel()
    assert [step.split(" ")[0] for step in chain[:2]] == ["_outer", "_inner"]
    assert "test_late_stop.py" in chain[0]
    assert chain[-1].startswith("waits on <Future pending")


async def test_a_late_stop_logs_every_pending_task_where_it_waits() -> None:
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(_outer(never), name="stuck-worker")
    reported = asyncio.Event()

    def report(loop: asyncio.AbstractEventLoop, seconds: float) -> None:
        _log_pending(loop, seconds)
        reported.set()

    try:
        with capture_logs() as logs, reported_if_late(after_seconds=0.05, report=report):
            await asyncio.wait_for(reported.wait(), 30)
    finally:
        task.cancel()
    [late] = [entry for entry in logs if entry["event"] == "stop is late"]
    assert late["log_level"] == "error"
    chain = late["pending_tasks"]["stuck-worker"]
    assert [step.split(" ")[0] for step in chain[:2]] == ["_outer", "_inner"]
    assert chain[-1].startswith("waits on <Future pending")
