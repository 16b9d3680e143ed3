"""Work that goes first on the shared event loop: a new head's scan by its chain's indexer, in
which a deposit found deep enough is recorded, its fill journalled and, once that commits,
broadcast (see `kinds.evm.indexer`).

Everything else in the process shares that loop and, with SQLite, the database's one
connection: an idle worker's tick or a follower's poll that starts between the head and the
fill's broadcast runs its statements and its answers' processing in the fill's way. While a
scan is held here, such work waits before it starts (`after`), for at most `HOLD_SECONDS`
from the start of the hold: a scan that stalls (a node slow to answer, a tick backing off)
delays the rest by that much once, never more. A solver holds the loop too while fills are
queued for it (a burst: hundreds of deposits in a block), for at most `QUEUED_SECONDS`: the
rest (following the fills mined, repayments, webhooks, the inventory view) waits until the
burst's fills are out, or that long. Work already running is not stopped; the indexers and
the solvers' fill loops never wait (they are that work), and a follower's poll waits for a
scan's bound at most (`after(at_most=...)`: the state quotes and fills read).

A leaf: it imports only the standard library, so any package may wait on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref

# The longest work that can wait is held back by one scan; the state quotes read (the
# followers' polls) is a head behind for at most this long.
HOLD_SECONDS = 0.1
# The longest the rest waits for a burst's fills queued at a solver.
QUEUED_SECONDS = 3.0


def _now() -> float:
    return asyncio.get_running_loop().time()


class FirstOnLoop:
    """Holds, each by its holder with its own bound, and the waits for them."""

    def __init__(self) -> None:
        # When each current hold began and how long it may hold the rest, by holder.
        self._since: dict[object, tuple[float, float]] = {}
        # Set (and replaced) whenever the last hold ends.
        self._released = asyncio.Event()

    def hold(self, holder: object, *, at_most: float = HOLD_SECONDS) -> None:
        """`holder`'s work goes first from now until `release(holder)`, for `at_most`
        seconds; holding again while held keeps the first start (the bound counts from
        there)."""
        self._since.setdefault(holder, (_now(), at_most))

    def release(self, holder: object) -> None:
        if self._since.pop(holder, None) is not None and not self._since:
            self._released.set()
            self._released = asyncio.Event()

    @property
    def held(self) -> bool:
        return bool(self._since)

    def holding(self, holder: object) -> bool:
        return holder in self._since

    async def after(self, *, at_most: float | None = None) -> None:
        """Returns once nothing is held, or every hold is older than its bound (or than
        `at_most`, when that is shorter)."""
        while self._since:
            until = max(
                start + (bound if at_most is None else min(bound, at_most))
                for start, bound in self._since.values()
            )
            left = until - _now()
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
