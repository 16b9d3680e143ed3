"""GET /config/v2 (the UI kit's useRelayConfig): bridge limits between two chains."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.params import ChainIdField, ReferrerQuery
from crossfill.app.bridge_limits import bridge_limits
from crossfill.domain.identifiers import InvalidIdentifier, parse_address, parse_text
from crossfill.errors import BadRequest

router = APIRouter(tags=["config"])


@router.get("/config/v2", response_model=None, responses=responses("config-v2", 400, 429, 503))
async def config_v2(
    runtime: RuntimeDep,
    origin_chain_id: Annotated[ChainIdField, Query(alias="originChainId")],
    destination_chain_id: Annotated[ChainIdField, Query(alias="destinationChainId")],
    user: Annotated[
        str | None, Query(description="Adds the user's balance and limit", max_length=100)
    ] = None,
    currency: Annotated[
        str | None,
        Query(
            description="Currency id (`eth`, `usdc`); the destination's native by default",
            max_length=50,
        ),
    ] = None,
    referrer: ReferrerQuery = None,
) -> dict[str, Any]:
    """Whether the currency bridges between the chains, the solver's inventory and what it
    fills per request, and (with `user`) the user's balance and bridgeable amount."""
    try:
        user_address = None if user is None else parse_address(user, "user")
        wanted = None if currency is None else parse_text(currency, "currency", max_length=50)
    except InvalidIdentifier as exc:
        raise BadRequest(str(exc)) from None
    limits = await bridge_limits(
        runtime,
        origin_chain_id,
        destination_chain_id,
        user=user_address,
        wanted_currency=None if wanted is None else wanted.lower(),
    )
    answer: dict[str, Any] = {
        "enabled": limits.enabled,
        "solver": {
            "address": limits.solver_address,
            "balance": str(limits.solver_balance),
            "capacityPerRequest": str(limits.capacity_per_request),
        },
        "supportsExternalLiquidity": False,
    }
    if limits.user is not None:
        answer["user"] = {
            "balance": str(limits.user.balance),
            "maxBridgeAmount": str(limits.user.max_bridge_amount),
        }
    return answer
