"""Which deposits owed to the solver are repaid now and together, what each is owed, when a
fill counts as final, and how a batch's gas is shared per repaid order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from crossfill.config import RepaymentSettings
from crossfill.domain.confirmations import ConfirmationTier, deep_enough
from crossfill.domain.money import MICROS_PER_USD
from crossfill.domain.repayments import BatchRules, Owed, batches_due, owed_amount, shares

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
RULES = BatchRules(
    size=3, max_age=timedelta(minutes=10), min_value_usd_micros=1_000 * MICROS_PER_USD
)
TIERS = (
    ConfirmationTier(max_usd=1_000, blocks=1),
    ConfirmationTier(max_usd=100_000, blocks=3),
    ConfirmationTier(blocks=12),
)


def _owed(deposit_id: int, *, usd: int | None = 10, minutes_ago: float = 1) -> Owed:
    value = None if usd is None else usd * MICROS_PER_USD
    return Owed(deposit_id, value, NOW - timedelta(minutes=minutes_ago))


def _ids(batches: list[list[Owed]]) -> list[list[int]]:
    return [[entry.deposit_id for entry in batch] for batch in batches]


def test_a_full_batch_goes_at_once_and_the_rest_waits() -> None:
    owed = [_owed(deposit_id) for deposit_id in range(1, 6)]
    assert _ids(batches_due(owed, RULES, now=NOW)) == [[1, 2, 3]]


def test_a_batch_worth_the_minimum_goes_before_it_is_full() -> None:
    owed = [_owed(1, usd=600), _owed(2, usd=400)]
    assert _ids(batches_due(owed, RULES, now=NOW)) == [[1, 2]]
    assert batches_due(owed[:1], RULES, now=NOW) == []


def test_a_batch_whose_oldest_fill_waited_the_maximum_age_goes_whatever_its_size() -> None:
    young = [_owed(1, minutes_ago=9)]
    assert batches_due(young, RULES, now=NOW) == []
    assert _ids(batches_due(young, RULES, now=NOW + timedelta(minutes=1))) == [[1]]


def test_deposits_without_a_price_count_for_nothing_but_still_go_by_age() -> None:
    unpriced = [_owed(1, usd=None, minutes_ago=1), _owed(2, usd=None, minutes_ago=1)]
    assert batches_due(unpriced, RULES, now=NOW) == []
    assert _ids(batches_due(unpriced, RULES, now=NOW + timedelta(minutes=9))) == [[1, 2]]


def test_the_oldest_fills_are_batched_first() -> None:
    owed = [_owed(7, minutes_ago=1), _owed(3, minutes_ago=30), _owed(5, minutes_ago=5)]
    assert _ids(batches_due(owed, RULES, now=NOW)) == [[3, 5, 7]]


@given(
    values=st.lists(st.integers(min_value=0, max_value=5_000), max_size=40),
    size=st.integers(min_value=1, max_value=8),
)
def test_batches_never_exceed_their_size_nor_repeat_a_deposit(values: list[int], size: int) -> None:
    rules = BatchRules(size=size, max_age=timedelta(minutes=10), min_value_usd_micros=0)
    owed = [_owed(index, usd=usd) for index, usd in enumerate(values)]
    batches = batches_due(owed, rules, now=NOW)
    flat = [entry.deposit_id for batch in batches for entry in batch]
    assert all(0 < len(batch) <= size for batch in batches)
    assert sorted(flat) == list(range(len(values)))  # no minimum value: every one goes


def test_the_solver_is_owed_the_deposit_less_the_app_fees_it_carried() -> None:
    assert owed_amount(1_000_000, []) == 1_000_000
    assert owed_amount(1_000_000, [2_500, 500]) == 997_000


@given(
    total=st.integers(min_value=0, max_value=10**24), parts=st.integers(min_value=1, max_value=50)
)
def test_a_batchs_gas_is_shared_to_the_unit(total: int, parts: int) -> None:
    each = shares(total, parts)
    assert len(each) == parts and sum(each) == total
    assert max(each) - min(each) <= total % parts


def test_a_fill_is_final_as_deep_as_a_deposit_of_its_value_must_be() -> None:
    small, large = 500 * MICROS_PER_USD, 50_000 * MICROS_PER_USD
    assert deep_enough(TIERS, small, head=100, block_number=100)
    assert not deep_enough(TIERS, large, head=101, block_number=100)
    assert deep_enough(TIERS, large, head=102, block_number=100)
    # Without a price, the deepest tier.
    assert not deep_enough(TIERS, None, head=110, block_number=100)
    assert deep_enough(TIERS, None, head=111, block_number=100)


def test_repayment_settings_default_and_become_batch_rules() -> None:
    settings = RepaymentSettings()
    assert settings.enabled
    assert settings.rules == BatchRules(
        size=20, max_age=timedelta(minutes=10), min_value_usd_micros=1_000 * MICROS_PER_USD
    )
    tuned = RepaymentSettings(batch_size=5, max_age_seconds=0, min_batch_value_usd=Decimal("2.5"))
    assert tuned.rules == BatchRules(size=5, max_age=timedelta(0), min_value_usd_micros=2_500_000)


@pytest.mark.parametrize(
    "bad", [{"batch_size": 0}, {"batch_size": 101}, {"max_age_seconds": -1}, {"surprise": 1}]
)
def test_repayment_settings_refuse_what_cannot_work(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        RepaymentSettings.model_validate(bad)
