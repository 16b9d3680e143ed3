"""Backoff: doubling with jitter up to a cap, a server's Retry-After honoured, reset on success."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from crossfill.domain.backoff import Backoff


def test_delays_double_up_to_the_cap_and_start_over_after_a_success() -> None:
    backoff = Backoff(base_seconds=0.5, cap_seconds=4.0, draw=lambda: 1.0)
    assert [backoff.failed() for _ in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    backoff.succeeded()
    assert backoff.failed() == 0.5


@given(st.integers(1, 200), st.floats(0, 0.999))
def test_jitter_stays_between_half_and_all_of_the_ceiling(failures: int, draw: float) -> None:
    backoff = Backoff(base_seconds=0.5, cap_seconds=30.0, draw=lambda: draw)
    for _ in range(failures - 1):
        backoff.failed()
    ceiling = min(30.0, 0.5 * 2 ** (failures - 1))
    assert ceiling / 2 <= backoff.failed() <= ceiling


def test_a_retry_after_is_honoured_within_the_cap() -> None:
    backoff = Backoff(base_seconds=0.5, cap_seconds=30.0, draw=lambda: 0.0)
    assert backoff.failed(at_least=7) == 7
    assert backoff.failed(at_least=600) == 30.0


def test_only_the_first_second_fourth_failures_are_logged() -> None:
    backoff = Backoff()
    logged = []
    for _ in range(20):
        backoff.failed()
        logged.append(backoff.worth_logging)
    assert [n + 1 for n, flag in enumerate(logged) if flag] == [1, 2, 4, 8, 16]
