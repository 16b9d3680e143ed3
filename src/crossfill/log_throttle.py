"""Entries logged per request, throttled: while a backing service is down every request fails
the same way, and a line per request (thousands a second under a client's retries) would bury
the log, and fill the disk the database may be short of already. At most one entry a second
per kind goes out, carrying how many of that kind were held back since the last one (a leaf:
standard library only)."""

from __future__ import annotations

import time
from collections.abc import Callable


class LogThrottle:
    def __init__(
        self, *, interval_seconds: float = 1.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._interval = interval_seconds
        self._clock = clock
        # kind -> (when one was last let through, how many were held back since)
        self._kinds: dict[str, tuple[float, int]] = {}

    def let_through(self, kind: str) -> int | None:
        """None to hold this entry back; else how many of `kind` were held back before it.
        `kind` must come from a small fixed set (never a client's input)."""
        now = self._clock()
        last = self._kinds.get(kind)
        if last is not None and now - last[0] < self._interval:
            self._kinds[kind] = (last[0], last[1] + 1)
            return None
        self._kinds[kind] = (now, 0)
        return 0 if last is None else last[1]
