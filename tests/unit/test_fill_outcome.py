"""What a mined fill delivered: a swap's output as its pair reported it, else the plan's."""

from __future__ import annotations

from typing import Any

from crossfill.app.fill_outcome import delivered_amount
from crossfill.contracts.router_calls import SwapPlan
from crossfill.store.tables import Request
from tests.unit.receipt_logs import swap_log

RECIPIENT, PAIR = "0x" + "be" * 20, "0x" + "a1" * 20
UNISWAP_ROUTER, WETH, USDC = "0x" + "55" * 20, "0x" + "22" * 20, "0x" + "11" * 20
QUOTED_OUT = 2_990_000_000


def _request(swap: SwapPlan | None) -> Request:
    plan: dict[str, Any] = {"swap": None if swap is None else swap.to_json(), "calls": []}
    return Request(recipient=RECIPIENT, amount_out=str(QUOTED_OUT), plan=plan)


def _swap(*, native_out: bool) -> SwapPlan:
    path = (USDC, WETH) if native_out else (WETH, USDC)
    return SwapPlan(UNISWAP_ROUTER, path, not native_out, native_out, 10**17, 2_900_000_000)


def test_a_swap_delivered_what_its_last_hop_paid_the_recipient() -> None:
    receipt = {"logs": [swap_log(PAIR, RECIPIENT, 0, 2_987_654_321)]}
    assert delivered_amount(_request(_swap(native_out=False)), receipt) == 2_987_654_321


def test_a_swap_into_ether_delivered_what_the_swap_router_unwrapped() -> None:
    receipt = {"logs": [swap_log(PAIR, UNISWAP_ROUTER, 10**17 + 5, 0)]}
    assert delivered_amount(_request(_swap(native_out=True)), receipt) == 10**17 + 5


def test_a_bridge_delivered_its_planned_output() -> None:
    assert delivered_amount(_request(None), {"logs": []}) == QUOTED_OUT
