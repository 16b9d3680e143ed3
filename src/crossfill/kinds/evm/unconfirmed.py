"""How many deposits an indexer has recorded but not yet confirmed, as far as its own writes
tell: its pass over the unconfirmed deposits runs only when there may be some.

Unknown at start (the first pass reads them all). Each pass that completes counts what it
left unconfirmed; each of the indexer's commits adds the deposits it recorded unconfirmed. A
deposit recorded by another process (one started by mistake, or one killed before it confirmed
its own) is not counted here: a full pass still runs every `full_pass_seconds`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

FULL_PASS_SECONDS = 10.0


class UnconfirmedCount:
    def __init__(
        self,
        *,
        full_pass_seconds: float = FULL_PASS_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._full_pass_seconds = full_pass_seconds
        self._clock = clock
        self._count: int | None = None  # None: not known (never read, or a pass failed)
        self._full_pass_due = 0.0

    def pass_due(self) -> bool:
        """Whether the pass should run: some may be unconfirmed, or the full pass is due."""
        return self._count != 0 or self._clock() >= self._full_pass_due

    def passing(self) -> None:
        """A pass starts: unknown until it completes (`left`)."""
        self._count = None

    def left(self, unconfirmed: int) -> None:
        """A pass completed, leaving this many unconfirmed."""
        self._count = unconfirmed
        self._full_pass_due = self._clock() + self._full_pass_seconds

    def recorded(self, unconfirmed: int) -> None:
        """A commit of the indexer's recorded this many deposits unconfirmed."""
        if self._count is not None:
            self._count += unconfirmed
