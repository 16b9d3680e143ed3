"""Gas for every key, the decision (`domain.key_gas`): who is below the minimum, how much a
top-up sends, never more than the solver can spare, and who stays low and why."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from crossfill.domain.key_gas import (
    CANNOT_SPARE,
    EXECUTIONS_WAIT,
    REFUSED,
    SOLVER,
    SOLVER_LOW,
    TOP_UPS_OFF,
    GasFloor,
    KeyGas,
    TopUp,
    plan_gas,
    solver_spare,
)
from crossfill.kinds.evm.config import KeyGasConfig

FLOOR = GasFloor(minimum=1_000, target=3_000)
COST = 21  # a top-up's own gas
SOLVER_KEY = KeyGas(SOLVER, "0x" + "aa" * 20, 10**9)


def sponsor(index: int, balance: int) -> KeyGas:
    return KeyGas(f"gasless-sponsor-{index}", "0x" + f"{index:02x}" * 20, balance)


def test_the_default_floor_is_so_many_transactions_at_the_fee_offered_now() -> None:
    floor = KeyGasConfig().floor(fee_per_gas=2 * 10**9)
    assert floor == GasFloor(20 * 300_000 * 2 * 10**9, 60 * 300_000 * 2 * 10**9)
    assert KeyGasConfig(
        minimum_transactions=5, target_transactions=10, transaction_gas=50_000
    ).floor(7) == GasFloor(5 * 50_000 * 7, 10 * 50_000 * 7)


def test_a_fixed_floor_ignores_the_fee_and_a_lone_minimum_gets_a_target_in_proportion() -> None:
    assert KeyGasConfig(minimum_wei=10, target_wei=25).floor(10**12) == GasFloor(10, 25)
    assert KeyGasConfig(minimum_wei=100).floor(10**12) == GasFloor(100, 300)
    # a fixed target below the fee-derived minimum: the target is lifted to the minimum
    assert KeyGasConfig(target_wei=1).floor(1) == GasFloor(20 * 300_000, 20 * 300_000)


def test_a_target_below_its_minimum_is_refused_in_the_deployment_file() -> None:
    with pytest.raises(ValidationError, match="target_wei must be at least"):
        KeyGasConfig(minimum_wei=10, target_wei=9)
    with pytest.raises(ValidationError, match="target_transactions must be at least"):
        KeyGasConfig(minimum_transactions=10, target_transactions=5)


def test_a_key_below_its_minimum_is_topped_up_to_its_target_and_one_above_is_left() -> None:
    low, fine, exact = sponsor(0, 400), sponsor(1, 1_001), sponsor(2, 1_000)
    plan = plan_gas([SOLVER_KEY, low, fine, exact], FLOOR, spare=10**6, transfer_cost=COST)
    assert plan.top_ups == (TopUp(low, 2_600),)
    assert plan.low == ()


def test_the_solvers_own_key_below_its_minimum_is_shown_never_topped_up() -> None:
    solver = KeyGas(SOLVER, SOLVER_KEY.address, 999)
    plan = plan_gas([solver], FLOOR, spare=10**6, transfer_cost=COST)
    assert plan.top_ups == ()
    assert [(entry.key, entry.minimum, entry.reason) for entry in plan.low] == [
        (solver, 1_000, SOLVER_LOW)
    ]


def test_a_top_up_never_takes_more_than_the_solver_can_spare_gas_included() -> None:
    key = sponsor(0, 400)
    # enough for the whole way to the target and the transfer's gas
    assert plan_gas([key], FLOOR, spare=2_600 + COST, transfer_cost=COST).top_ups == (
        TopUp(key, 2_600),
    )
    # short of the target but enough to lift it past its minimum: what can be spared
    assert plan_gas([key], FLOOR, spare=1_000, transfer_cost=COST).top_ups == (
        TopUp(key, 1_000 - COST),
    )
    # not enough to lift it to its minimum: nothing sent, the key shown low
    plan = plan_gas([key], FLOOR, spare=600 + COST - 1, transfer_cost=COST)
    assert plan.top_ups == ()
    assert [(entry.key, entry.reason) for entry in plan.low] == [(key, CANNOT_SPARE)]
    assert plan_gas([key], FLOOR, spare=0, transfer_cost=COST).low[0].reason == CANNOT_SPARE


def test_the_lowest_key_goes_first_and_the_others_share_what_is_left() -> None:
    lowest, lower = sponsor(0, 100), sponsor(1, 900)
    plan = plan_gas([lower, lowest], FLOOR, spare=2_900 + COST + 50 + COST, transfer_cost=COST)
    assert plan.top_ups == (TopUp(lowest, 2_900),)
    assert [(entry.key, entry.reason) for entry in plan.low] == [(lower, CANNOT_SPARE)]
    spent = sum(top_up.amount + COST for top_up in plan.top_ups)
    assert spent <= 2_900 + COST + 50 + COST


def test_top_ups_off_or_a_refusing_address_leave_the_key_low_with_why() -> None:
    key = sponsor(0, 10)
    off = plan_gas([key], FLOOR, spare=10**6, transfer_cost=COST, top_ups_on=False)
    assert off.top_ups == () and off.low[0].reason == TOP_UPS_OFF
    refusing = plan_gas([key], FLOOR, spare=10**6, transfer_cost=COST, refusing={key.address})
    assert refusing.top_ups == () and refusing.low[0].reason == REFUSED


def test_the_solver_spares_what_is_above_its_own_minimum_and_nothing_while_fills_wait() -> None:
    assert (
        solver_spare(available=5_000, committed=0, solver_minimum=1_000, waiting_fills_lack=0)
        == 4_000
    )
    assert solver_spare(available=900, committed=0, solver_minimum=1_000, waiting_fills_lack=0) == 0
    assert (
        solver_spare(available=10**9, committed=0, solver_minimum=1_000, waiting_fills_lack=1) == 0
    )
    # Outputs of orders in flight are the users', not the keys' gas.
    assert (
        solver_spare(available=5_000, committed=3_500, solver_minimum=1_000, waiting_fills_lack=0)
        == 500
    )


def test_a_sponsor_whose_executions_wait_is_topped_up_to_what_they_need() -> None:
    waiting = KeyGas("gasless-sponsor-0", "0x" + "01" * 20, 2_000, needed=5_000)
    assert waiting.floor(FLOOR) == GasFloor(5_000, 5_000)
    plan = plan_gas([waiting], FLOOR, spare=10**9, transfer_cost=COST)
    assert plan.top_ups == (TopUp(waiting, 3_000),) and plan.low == ()
    # Above its floor but short of the need, and nothing to spare: shown with why.
    (low,) = plan_gas([waiting], FLOOR, spare=0, transfer_cost=COST).low
    assert (low.minimum, low.reason) == (5_000, f"{CANNOT_SPARE}; {EXECUTIONS_WAIT}")
    # A need within the floor changes nothing.
    within = KeyGas("gasless-sponsor-0", "0x" + "01" * 20, 2_000, needed=500)
    assert plan_gas([within], FLOOR, spare=10**9, transfer_cost=COST) == plan_gas(
        [sponsor(1, 2_000)], FLOOR, spare=10**9, transfer_cost=COST
    )
