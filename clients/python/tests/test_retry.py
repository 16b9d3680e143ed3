"""The retry policy: what is tried again, after how long, and how many times."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from crossfill_client import RetryPolicy
from crossfill_client._retry import Failure, failure_of_status, retry_after_seconds

STEADY = RetryPolicy(attempts=4, backoff_base=0.5, backoff_max=3.0, jitter=0.0)


def test_backoff_doubles_from_the_base_up_to_the_cap() -> None:
    delays = [STEADY.delay(n, Failure.SERVER_ERROR, idempotent=True) for n in (1, 2, 3)]
    assert delays == [0.5, 1.0, 2.0]
    capped = RetryPolicy(attempts=10, backoff_base=0.5, backoff_max=3.0, jitter=0.0)
    assert capped.delay(6, Failure.SERVER_ERROR, idempotent=True) == 3.0


def test_attempts_are_bounded() -> None:
    assert STEADY.delay(4, Failure.SERVER_ERROR, idempotent=True) is None
    assert RetryPolicy(attempts=1).delay(1, Failure.RATE_LIMITED, idempotent=True) is None


def test_retry_after_is_waited_for_unless_it_is_too_long() -> None:
    assert STEADY.delay(1, Failure.RATE_LIMITED, idempotent=True, retry_after=7) == 7
    too_long = STEADY.retry_after_max + 1
    assert STEADY.delay(1, Failure.RATE_LIMITED, idempotent=True, retry_after=too_long) is None


@pytest.mark.parametrize(
    ("failure", "retried"),
    [
        (Failure.RATE_LIMITED, True),  # refused before acting
        (Failure.NOT_CONNECTED, True),  # never sent
        (Failure.SERVER_ERROR, False),  # may have acted
        (Failure.CONNECTION_LOST, False),  # may have acted
    ],
)
def test_a_call_unsafe_to_repeat_is_retried_only_when_nothing_acted(
    failure: Failure, retried: bool
) -> None:
    assert (STEADY.delay(1, failure, idempotent=False) is not None) is retried
    assert STEADY.delay(1, failure, idempotent=True) is not None


def test_jitter_shortens_the_backoff_by_at_most_its_share() -> None:
    jittery = RetryPolicy(backoff_base=1.0, jitter=0.25, random=lambda: 1.0)
    assert jittery.delay(1, Failure.SERVER_ERROR, idempotent=True) == 0.75


def test_statuses_that_are_retried() -> None:
    assert failure_of_status(429) is Failure.RATE_LIMITED
    assert {failure_of_status(code) for code in (500, 502, 503, 504)} == {Failure.SERVER_ERROR}
    assert {failure_of_status(code) for code in (200, 400, 401, 404, 409, 501)} == {None}


def test_retry_after_reads_seconds_and_http_dates() -> None:
    now = datetime(2026, 11, 28, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds("Sat, 28 Nov 2026 12:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds("Sat, 28 Nov 2026 11:00:00 GMT", now=now) == 0.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None
