"""What a request's mined fill delivered to its recipient."""

from __future__ import annotations

from typing import Any

from crossfill.contracts.router_calls import SwapPlan
from crossfill.kinds.evm.receipt_outcomes import swap_output
from crossfill.store.tables import Request


def delivered_amount(request: Request, receipt: Any) -> int:
    """A swap's real output, read from the receipt's swap events (it may beat the quote's
    expected amount, or fall short of it down to the floor). Without a swap the Filler pays
    the planned output exactly or reverts, so a successful fill delivered just that; so does
    a swap whose surplus goes to the solver (`enableTrueExactOutput`)."""
    plan = request.plan or {}
    stored_swap = plan.get("swap")
    if plan.get("calls") or not stored_swap or plan.get("trueExactOutput"):
        return int(request.amount_out)
    swap = SwapPlan.from_json(stored_swap)
    return swap_output(receipt["logs"], swap.router if swap.native_out else request.recipient)
