"""Bounded exponential backoff with jitter, for retrying what failed for reasons outside us
(an RPC node, the database): each failure waits longer, up to a cap; a success starts over."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Backoff:
    base_seconds: float = 0.5
    cap_seconds: float = 30.0
    failures: int = 0
    # A number in [0, 1): the jitter's source (tests pin it).
    draw: Callable[[], float] = field(default=random.random, repr=False)

    def failed(self, *, at_least: float | None = None) -> float:
        """Count a failure; the seconds to wait before trying again: between half and all of
        `base * 2**(failures - 1)` (capped), and never less than `at_least` (a server's
        Retry-After, itself capped)."""
        self.failures += 1
        doubling = float(2 ** min(self.failures - 1, 32))
        ceiling = min(self.cap_seconds, self.base_seconds * doubling)
        delay: float = ceiling / 2 + self.draw() * ceiling / 2
        if at_least is not None:
            delay = max(delay, min(at_least, self.cap_seconds))
        return delay

    def succeeded(self) -> None:
        self.failures = 0

    @property
    def worth_logging(self) -> bool:
        """The 1st, 2nd, 4th, 8th... failure in a row: an outage shows without flooding."""
        return self.failures > 0 and self.failures & (self.failures - 1) == 0
