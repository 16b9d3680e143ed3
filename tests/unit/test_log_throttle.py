"""Per-request log entries during an outage: one a second per kind, counting the rest."""

from __future__ import annotations

from crossfill.log_throttle import LogThrottle


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_one_entry_a_second_per_kind_carrying_the_count_held_back() -> None:
    clock = _Clock()
    throttle = LogThrottle(interval_seconds=1.0, clock=clock)
    assert throttle.let_through("the database") == 0
    assert [throttle.let_through("the database") for _ in range(5)] == [None] * 5
    assert throttle.let_through("a chain's RPC") == 0  # another kind is not held back
    clock.now += 1.0
    assert throttle.let_through("the database") == 5
    assert throttle.let_through("the database") is None
    clock.now += 10.0
    assert throttle.let_through("the database") == 1
