"""A client's hint budget: a minute's calls at once, refilled with time, and a bounded number
of clients remembered."""

from __future__ import annotations

from datetime import timedelta

import pytest

from crossfill.kinds.evm import hint_budget
from crossfill.kinds.evm.hint_budget import HintBudget
from tests.unit.worker_world import Clock


def test_a_client_spends_a_minutes_calls_then_one_per_refill() -> None:
    clock = Clock()
    budget = HintBudget(6, now=clock)
    assert [budget.take("ip:1.2.3.4") for _ in range(7)] == [True] * 6 + [False]
    assert budget.take("ip:5.6.7.8")  # another client's bucket is its own
    clock.advance(timedelta(seconds=9))
    assert not budget.take("ip:1.2.3.4")
    clock.advance(timedelta(seconds=1))  # 10 s: one call back
    assert budget.take("ip:1.2.3.4")
    assert not budget.take("ip:1.2.3.4")
    clock.advance(timedelta(hours=1))  # never more than a minute's worth
    assert [budget.take("ip:1.2.3.4") for _ in range(7)] == [True] * 6 + [False]


def test_with_every_bucket_in_use_a_new_client_waits_until_one_refills(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(hint_budget, "MAX_CLIENTS", 3)
    clock = Clock()
    budget = HintBudget(6, now=clock)
    assert all(budget.take(f"ip:10.0.0.{n}") for n in range(3))
    assert not budget.take("ip:10.0.0.9")
    clock.advance(timedelta(seconds=10))  # each refilled to full: nothing left to remember
    assert budget.take("ip:10.0.0.9")


def test_a_budget_needs_a_call_a_minute() -> None:
    with pytest.raises(ValueError, match="at least one call"):
        HintBudget(0, now=Clock())
