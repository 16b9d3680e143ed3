"""A server on an event loop of its own, in a daemon thread, for tests that run their own
loop (or none) beside it: the TCP relay and the load balancer."""

from __future__ import annotations

import asyncio
import threading
from typing import Self


class LoopThreadServer:
    """`start` runs `_listen` on the server's loop and returns once it listens; `stop` runs
    `_shut_down` there, then ends the loop and its thread."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def start(self) -> Self:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(5)
        return self

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._shut_down(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    async def _listen(self) -> None:
        raise NotImplementedError

    async def _shut_down(self) -> None:
        raise NotImplementedError


async def end_other_tasks() -> None:
    """Every task on this loop but the caller's cancelled, and waited for until it has ended."""
    others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)
