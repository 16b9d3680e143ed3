"""A worker's wait keeps every cancellation: stopping the workers cancels each loop, and a loop
whose wakeup fires in that same event-loop iteration (a new head arriving as the service
stops) must stop too. On Python 3.11, `asyncio.wait_for` returned the wakeup instead and the
loop ran on, so the process never exited after Ctrl-C."""

from __future__ import annotations

import asyncio

import pytest

from crossfill import loops
from crossfill.loops import run_forever, set_within, wait_interval


async def _stopped(task: asyncio.Task[None]) -> bool:
    """True once `task` has ended cancelled (within a second); False if it runs on."""
    done, _ = await asyncio.wait({task}, timeout=1)
    if not done:
        task.cancel()  # a second cancel, so the test itself does not leave it running
        await asyncio.gather(task, return_exceptions=True)
        return False
    return task.cancelled()


@pytest.mark.parametrize("iterations_between", [0, 1, 2])
async def test_a_loop_woken_as_it_is_cancelled_stops(iterations_between: int) -> None:
    """The wakeup fires, then the stop cancels the loop in the same event-loop iteration or
    one or two later, before or after the loop has seen it: it stops whichever."""
    wakeup = asyncio.Event()
    ticked = asyncio.Event()

    async def tick() -> None:
        ticked.set()

    loop = asyncio.create_task(
        run_forever("woken-while-stopped", tick, lambda: wait_interval(wakeup, 30))
    )
    await ticked.wait()
    await asyncio.sleep(0)  # the loop waits
    wakeup.set()
    for _ in range(iterations_between):
        await asyncio.sleep(0)
    loop.cancel()
    assert await _stopped(loop)


@pytest.mark.parametrize("fires", [True, False])
async def test_a_wait_cancelled_with_its_event_set_raises(fires: bool) -> None:
    event = asyncio.Event()
    waiting = asyncio.create_task(set_within(event, 30))
    await asyncio.sleep(0)
    if fires:
        event.set()  # and cancelled before the waiting task runs again
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_a_wait_answers_whether_it_was_woken_and_clears_the_wakeup() -> None:
    wakeup = asyncio.Event()
    assert await wait_interval(wakeup, 0.01) is False
    wakeup.set()
    assert await wait_interval(wakeup, 30) is True
    assert not wakeup.is_set()


async def test_a_stop_cancels_again_a_task_that_ran_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A library deeper down may still swallow a cancellation: the stop sends it again."""
    monkeypatch.setattr(loops, "RECANCEL_AFTER_SECONDS", 0.05)
    swallowed = 0

    async def runs_on_once() -> None:
        nonlocal swallowed
        while True:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                if swallowed:
                    raise
                swallowed += 1

    async def fails() -> None:
        raise RuntimeError("ended with an error before the stop")

    stubborn = asyncio.create_task(runs_on_once())
    failed = asyncio.create_task(fails())
    await asyncio.sleep(0.01)
    await asyncio.wait_for(loops.stop_tasks([stubborn, failed]), 5)
    assert stubborn.cancelled() and swallowed == 1
    assert isinstance(failed.exception(), RuntimeError)
