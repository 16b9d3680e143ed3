"""What a fade costs an external solver (`domain.fades`): a cooldown doubled per fade in a row,
capped, never shortening one running; the fallback's cost above the operator's own price."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from crossfill.domain.fades import FadePenalty, fade_cost

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_cooldown_doubles_per_fade_in_a_row_up_to_its_maximum() -> None:
    penalty = FadePenalty(cooldown_seconds=60, max_cooldown_seconds=600)
    assert [penalty.cooldown(n).total_seconds() for n in range(1, 7)] == [
        60, 120, 240, 480, 600, 600,
    ]  # fmt: skip
    assert penalty.cooldown(10_000) == timedelta(seconds=600)


def test_a_longer_cooldown_running_is_kept() -> None:
    penalty = FadePenalty(cooldown_seconds=60)
    later = NOW + timedelta(hours=1)
    assert penalty.cooled_until(1, now=NOW, running=later) == later
    assert penalty.cooled_until(1, now=NOW, running=NOW) == NOW + timedelta(seconds=60)
    assert penalty.cooled_until(2, now=NOW, running=None) == NOW + timedelta(seconds=120)


def test_the_cost_is_the_output_above_the_operators_and_the_gas_in_the_same_currency() -> None:
    assert fade_cost(paid=1_000, operator_output=900, gas=7, gas_in_output=True) == 107
    assert fade_cost(paid=1_000, operator_output=900, gas=7, gas_in_output=False) == 100
    # Never negative, and only the gas when the operator's own price is not known.
    assert fade_cost(paid=800, operator_output=900, gas=7, gas_in_output=True) == 7
    assert fade_cost(paid=1_000, operator_output=None, gas=7, gas_in_output=True) == 7
