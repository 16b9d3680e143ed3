"""The fill path first on the event loop: work that can wait starts after a hold is released,
or once the hold is older than its bound; never before."""

from __future__ import annotations

import asyncio

from crossfill.first_on_loop import HOLD_SECONDS, QUEUED_SECONDS, FirstOnLoop


async def test_nothing_held_nothing_waits() -> None:
    gate = FirstOnLoop()
    async with asyncio.timeout(0.01):
        await gate.after()


async def test_waiting_work_starts_when_the_hold_is_released() -> None:
    gate = FirstOnLoop()
    gate.hold("indexer-1")
    gate.hold("indexer-2")
    waiting = asyncio.create_task(gate.after())
    await asyncio.sleep(0.01)
    gate.release("indexer-1")
    await asyncio.sleep(0.01)
    assert not waiting.done()  # another scan still under way
    gate.release("indexer-2")
    async with asyncio.timeout(0.05):
        await waiting
    assert not gate.held


async def test_a_stalled_hold_delays_waiting_work_by_its_bound_once() -> None:
    gate = FirstOnLoop()
    gate.hold("indexer")
    loop = asyncio.get_running_loop()
    started = loop.time()
    await gate.after()
    assert loop.time() - started >= HOLD_SECONDS * 0.9
    gate.hold("indexer")  # held again while held: the bound still counts from the first
    async with asyncio.timeout(0.01):
        await gate.after()


async def test_each_hold_bounds_the_wait_by_its_own_bound() -> None:
    """Fills queued hold the rest longer than a scan does; a caller that reads the state
    fills need (a follower's poll) waits for a scan's bound at most."""
    gate = FirstOnLoop()
    gate.hold("solver", at_most=QUEUED_SECONDS)
    loop = asyncio.get_running_loop()
    started = loop.time()
    await gate.after(at_most=HOLD_SECONDS)
    assert HOLD_SECONDS * 0.9 <= loop.time() - started < QUEUED_SECONDS
    waiting = asyncio.create_task(gate.after())
    await asyncio.sleep(HOLD_SECONDS * 2)
    assert not waiting.done()  # past a scan's bound, not past the queue's
    gate.release("solver")
    async with asyncio.timeout(0.05):
        await waiting
