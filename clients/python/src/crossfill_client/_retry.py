"""When to try a call again, and after how long: pure, so it is tested without a network.

A call is tried again after a rate limit (429: the answer's `Retry-After`, else the backoff),
a server error (5xx) or a broken connection, at most `attempts` times in all, waiting
`backoff_base * 2**n` seconds (capped at `backoff_max`, spread by `jitter`). What is not safe
to repeat (`idempotent=False`: a gasless execution) is tried again only when the service
cannot have acted on it: a 429, or a connection that was never made.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from enum import Enum


class Failure(Enum):
    """How an attempt failed, for the policy."""

    RATE_LIMITED = "rate limited"  # 429: the service did not act
    SERVER_ERROR = "server error"  # 5xx: it may have acted
    NOT_CONNECTED = "not connected"  # the request never left: nothing acted
    CONNECTION_LOST = "connection lost"  # sent, no answer: it may have acted


@dataclass(frozen=True)
class RetryPolicy:
    """`attempts` is the most tries of one call (1: never again)."""

    attempts: int = 4
    backoff_base: float = 0.5
    backoff_max: float = 8.0
    # A Retry-After longer than this is not waited for: the error is raised instead.
    retry_after_max: float = 60.0
    # Each backoff is multiplied by a random factor in [1 - jitter, 1].
    jitter: float = 0.2
    random: Callable[[], float] = field(default=random.random, compare=False, repr=False)

    def delay(
        self,
        attempt: int,
        failure: Failure,
        *,
        idempotent: bool,
        retry_after: float | None = None,
    ) -> float | None:
        """Seconds to wait before try `attempt + 1` after try `attempt` (from 1) failed as
        `failure`; None when the failure is final."""
        if attempt >= self.attempts or not _repeatable(failure, idempotent):
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.retry_after_max else None
        backoff = min(self.backoff_max, self.backoff_base * (1 << (attempt - 1)))
        return backoff * (1 - self.jitter * self.random())


def _repeatable(failure: Failure, idempotent: bool) -> bool:
    return idempotent or failure in (Failure.RATE_LIMITED, Failure.NOT_CONNECTED)


NO_RETRIES = RetryPolicy(attempts=1)


def failure_of_status(status_code: int) -> Failure | None:
    """The failure an HTTP status is, if it is one the policy may retry."""
    if status_code == 429:
        return Failure.RATE_LIMITED
    if status_code in (500, 502, 503, 504):
        return Failure.SERVER_ERROR
    return None


def retry_after_seconds(value: str | None, *, now: datetime | None = None) -> float | None:
    """`Retry-After` as seconds from now: delta-seconds or an HTTP date; None when absent or
    unreadable."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
