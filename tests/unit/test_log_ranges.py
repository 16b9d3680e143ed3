"""The blocks a log query covers on a node that caps them: halved on each refusal, one block
refused is final."""

from __future__ import annotations

from crossfill.kinds.evm.log_ranges import LogRange


def _covered_until_accepted(log_range: LogRange, start: int, last: int, cap: int) -> list[int]:
    """The widths asked from `start` until a node capping queries at `cap` blocks answers."""
    asked = []
    while True:
        end = log_range.end(start, last)
        asked.append(end - start + 1)
        if end - start + 1 <= cap:
            return asked
        assert log_range.narrowed(start, end)


def test_each_refusal_halves_the_range_that_was_refused() -> None:
    log_range = LogRange(2_000)
    # 62 blocks to the head: the first query asks all of them, not 2,000 halved.
    assert _covered_until_accepted(log_range, 100, 161, cap=20) == [62, 31, 15]
    assert log_range.span == 15  # the rest of this catch-up goes 15 at a time


def test_one_block_refused_is_not_a_matter_of_range() -> None:
    log_range = LogRange(8)
    assert not log_range.narrowed(5, 5)
    assert log_range.span == 8
