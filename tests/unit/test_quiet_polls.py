"""A poller that opts in waits longer after ticks that found nothing (1, 2, then at most
`QUIET_WAITS_AT_MOST` waits between ticks); a tick that hands out an item, or a wakeup, brings
it back to one wait. Loops that do not opt in wait once per tick, whatever they find."""

from __future__ import annotations

import asyncio
import contextlib

from crossfill.loops import QUIET_WAITS_AT_MOST, each_on_its_own, run_forever, wait_interval


class _Poller:
    """Ticks `found` items per tick, in turn; records how many waits came before each tick."""

    def __init__(self, found: list[int], *, woken_at_wait: int | None = None) -> None:
        self.found = found
        self.waits_before_tick: list[int] = []
        self._waits = 0
        self._woken_at_wait = woken_at_wait
        self.done = asyncio.Event()

    async def tick(self) -> None:
        self.waits_before_tick.append(self._waits)
        self._waits = 0
        if len(self.waits_before_tick) > len(self.found):
            self.done.set()
            await asyncio.Event().wait()
        items = range(self.found[len(self.waits_before_tick) - 1])
        await each_on_its_own("poller", items, self._act, label=str)

    async def _act(self, item: int) -> None:
        return None

    async def wait(self) -> bool | None:
        self._waits += 1
        await asyncio.sleep(0)
        if self._woken_at_wait is not None and self._waits == self._woken_at_wait:
            return True
        return None


async def _run(poller: _Poller, *, stretch: bool) -> list[int]:
    task = asyncio.create_task(
        run_forever("poller", poller.tick, poller.wait, stretch_when_quiet=stretch)
    )
    await asyncio.wait_for(poller.done.wait(), 5)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return poller.waits_before_tick[1:]


async def test_quiet_ticks_stretch_the_wait_and_found_work_ends_it() -> None:
    waits = await _run(_Poller([0, 0, 0, 0, 3, 0, 1]), stretch=True)
    assert QUIET_WAITS_AT_MOST == 4
    assert waits == [2, 4, 4, 4, 1, 2, 1]


async def test_a_wakeup_ends_a_stretched_wait() -> None:
    waits = await _run(_Poller([0, 0, 0], woken_at_wait=3), stretch=True)
    # After the second quiet tick 4 waits were due: the wakeup in the third cut them short,
    # and the stretch starts over.
    assert waits == [2, 3, 2]


async def test_loops_that_do_not_opt_in_wait_once_per_tick() -> None:
    assert await _run(_Poller([0, 0, 0, 0]), stretch=False) == [1, 1, 1, 1]


async def test_wait_interval_says_whether_it_was_woken() -> None:
    wakeup = asyncio.Event()
    assert await wait_interval(wakeup, 0.01) is False
    wakeup.set()
    assert await wait_interval(wakeup, 5) is True
    assert not wakeup.is_set()
