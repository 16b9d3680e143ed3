"""Work that goes first on the shared event loop: a new head's scan by its chain's indexer, in
which a deposit found deep enough is recorded, its fill journalled and, once that commits,
broadcast (see `kinds.evm.indexer`).

Everything else in the process shares that loop and, with SQLite, the database's one
connection: an idle worker's tick or a follower's poll that starts between the head and the
fill's broadcast runs its statements and its answers' processing in the fill's way. While a
scan is held here, such work waits before it starts (`after`), for at most `HOLD_SECONDS`
from the start of the oldest hold: a scan that stalls (a node slow to answer, a tick backing
off) delays the rest by that much once, never more. Work already running is not stopped; the
indexers themselves never wait (each may carry fills).

A leaf: it imports only the standard library, so any package may wait on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref

# The longest work that can wait is held back by one scan; the state quotes read (the
# followers' polls) is a head behind for at most this long.
HOLD_SECONDS = 0.1


def _now() -> float:
    return asyncio.get_running_loop().time()


class FirstOnLoop:
    """Holds, each by its holder, and the waits for them."""

    def __init__(self) -> None:
        # When each current hold began, by holder.
        self._since: dict[object, float] = {}
        # Set (and replaced) whenever the last hold ends.
        self._released = asyncio.Event()

    def hold(self, holder: object) -> None:
        """`holder`'s work goes first from now until `release(holder)`; holding again while
        held keeps the first start (the bound counts from there)."""
        self._since.setdefault(holder, _now())

    def release(self, holder: object) -> None:
        if self._since.pop(holder, None) is not None and not self._since:
            self._released.set()
            self._released = asyncio.Event()

    @property
    def held(self) -> bool:
        return bool(self._since)

    async def after(self) -> None:
        """Returns once nothing is held, or every hold is older than `HOLD_SECONDS`."""
        while self._since:
            left = min(self._since.values()) + HOLD_SECONDS - _now()
            if left <= 0:
                return
            released = self._released
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await released.wait()


_BY_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, FirstOnLoop] = (
    weakref.WeakKeyDictionary()
)


def fill_path() -> FirstOnLoop:
    """The running loop's fill path. A process serves from one loop; tests run several
    services, each on its own loop in its own thread, and an asyncio.Event serves one loop."""
    loop = asyncio.get_running_loop()
    found = _BY_LOOP.get(loop)
    if found is None:
        found = _BY_LOOP[loop] = FirstOnLoop()
    return found
