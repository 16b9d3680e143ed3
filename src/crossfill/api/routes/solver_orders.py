"""`GET /solvers/{address}/orders`: the paid orders an external solver won and has not filled,
each with the fill terms the Filler takes from it (docs/solvers.md). Public: the terms let
only that solver fill before its exclusivity deadline."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.app.won_orders import won_orders

router = APIRouter(tags=["solvers"], responses=responses(None, 400))
SolverAddress = Annotated[str, Path(pattern=r"^0x[0-9a-fA-F]{40}$")]


@router.get("/solvers/{address}/orders", response_model=None)
async def orders_won(address: SolverAddress, runtime: RuntimeDep) -> dict[str, Any]:
    """The orders `address` won, paid and not filled yet, oldest first (at most 100)."""
    return {"orders": [order.wire() for order in await won_orders(runtime, address)]}
