"""SIGTERM stops a process as Ctrl-C does: inside the event loop's runner it cancels the main
task (whose `finally` then runs) instead of raising KeyboardInterrupt in whatever code runs at
that instant, such as a worker's database call."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from types import FrameType

import pytest

from crossfill.cli.foreground import exit_on_sigterm


@pytest.fixture
def sigterm_handler() -> Iterator[None]:
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    exit_on_sigterm()
    yield
    signal.signal(signal.SIGTERM, before[0])
    signal.signal(signal.SIGINT, before[1])


def test_sigterm_goes_to_the_sigint_handler_in_place(sigterm_handler: None) -> None:
    received: list[int] = []

    def on_sigint(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)

    signal.signal(signal.SIGINT, on_sigint)
    try:
        os.kill(os.getpid(), signal.SIGTERM)  # Python runs the handler before the next line
    except KeyboardInterrupt:
        pytest.fail("SIGTERM raised KeyboardInterrupt with a SIGINT handler in place")
    assert received == [signal.SIGINT]


def test_sigterm_cancels_the_runners_main_task(sigterm_handler: None) -> None:
    seen_by_worker: list[str] = []
    unwound: list[str] = []

    async def busy_worker() -> None:
        try:
            while True:
                await asyncio.sleep(0)
                sum(range(1000))
        except BaseException as exc:
            seen_by_worker.append(type(exc).__name__)
            raise

    async def main() -> None:
        worker = asyncio.create_task(busy_worker())
        try:
            asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGTERM)
            await asyncio.sleep(30)
        finally:
            worker.cancel()
            unwound.append("main's finally")

    with pytest.raises(KeyboardInterrupt), asyncio.Runner() as runner:
        runner.run(main())
    assert unwound == ["main's finally"]
    assert seen_by_worker == ["CancelledError"]


def test_sigterm_outside_a_runner_raises_keyboard_interrupt(sigterm_handler: None) -> None:
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGTERM)  # Python runs the handler before the next line
