"""The indexer's count of deposits recorded but not confirmed: when its pass runs."""

from __future__ import annotations

from crossfill.kinds.evm.unconfirmed import UnconfirmedCount


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_first_pass_runs_and_one_that_left_none_is_skipped_until_the_full_pass() -> None:
    clock = Clock()
    count = UnconfirmedCount(full_pass_seconds=10, clock=clock)
    assert count.pass_due()  # unknown at start
    count.passing()
    count.left(0)
    assert not count.pass_due()
    clock.now = 9.9
    assert not count.pass_due()
    clock.now = 10.0
    assert count.pass_due()  # a deposit another process recorded is found here


def test_a_deposit_recorded_unconfirmed_makes_the_pass_run_until_it_is_confirmed() -> None:
    count = UnconfirmedCount(full_pass_seconds=10, clock=Clock())
    count.passing()
    count.left(0)
    count.recorded(0)
    assert not count.pass_due()
    count.recorded(1)
    assert count.pass_due()
    count.passing()
    count.left(1)  # not deep enough yet
    assert count.pass_due()
    count.passing()
    count.left(0)
    assert not count.pass_due()


def test_a_pass_that_did_not_complete_leaves_the_count_unknown() -> None:
    count = UnconfirmedCount(full_pass_seconds=10, clock=Clock())
    count.passing()
    count.left(0)
    count.passing()  # and it raised: `left` never called
    count.recorded(0)  # unknown stays unknown
    assert count.pass_due()
