"""GET /chains."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.schemas.chains import ChainsResponse
from crossfill.domain.identifiers import InvalidIdentifier, parse_chain_id
from crossfill.domain.key_gas import SOLVER
from crossfill.errors import BadRequest
from crossfill.kinds.chain_view import ChainLiveStatus
from crossfill.kinds.chain_wire import Chain
from crossfill.kinds.port import KindChain
from crossfill.runtime import Runtime
from crossfill.store import chain_controls
from crossfill.store.tables import ChainControl

router = APIRouter(tags=["chains"])


def parse_chain_ids(include_chains: str) -> set[int]:
    """`includeChains`: comma-separated positive integer chain ids."""
    ids: set[int] = set()
    for part in include_chains.split(","):
        token = part.strip()
        if not token:
            continue
        try:
            ids.add(parse_chain_id(token, "includeChains"))
        except InvalidIdentifier:
            raise BadRequest(
                f"includeChains must be comma-separated chain ids; {token[:80]!r} is not one"
            ) from None
    return ids


# Shown while the service's last read of a chain failed (an operator's message wins); the
# node's own error stays in the logs: it may name an RPC endpoint.
RPC_TROUBLE = "The service cannot read this chain right now; deposits and fills wait for it"


# Shown while a key the service sends from is low on gas and is not being topped up (after
# an operator's message and a failing read); which key and how low is on /readyz.
SOLVER_LOW_ON_GAS = "The solver is low on gas on this chain; fills and refunds may wait"
SPONSOR_LOW_ON_GAS = "A gas sponsor is low on gas on this chain; gasless executions may wait"


# Shown while the rebalancer cannot refill the solver's inventory on a chain (after the
# above); why, by currency, is on /readyz (`checks.rebalancing`).
REBALANCING_STUCK = (
    "The solver's inventory on this chain cannot be refilled right now; quotes to it may be "
    "refused as it runs low"
)


def _treasury_trouble(chain: KindChain) -> str | None:
    low = chain.low_on_gas()
    if SOLVER in low:
        return SOLVER_LOW_ON_GAS
    if low:
        return SPONSOR_LOW_ON_GAS
    return REBALANCING_STUCK if chain.rebalancing() else None


def _live_status(chain: KindChain, control: ChainControl | None, now: float) -> ChainLiveStatus:
    operator_reason = control.reason if control is not None and control.disabled else None
    trouble = RPC_TROUBLE if chain.read_failing() else _treasury_trouble(chain)
    return ChainLiveStatus(
        disabled=control.disabled if control is not None else chain.configured_disabled,
        lagging=chain.lagging(now),
        status_message=operator_reason or chain.status_message or trouble,
    )


async def live_records(runtime: Runtime, wanted: set[int] | None = None) -> list[Chain]:
    """Every chain's `/chains` record with its live status (only those of `wanted`, if given)."""
    async with runtime.sessions() as session:
        controls = {
            control.chain_id: control for control in await chain_controls.all_controls(session)
        }
    now = runtime.clock()
    solver_address = runtime.deployment.solver.address
    return [
        chain.wire(_live_status(chain, controls.get(chain_id), now), solver_address=solver_address)
        for chain_id, chain in runtime.kind_chains.items()
        if wanted is None or chain_id in wanted
    ]


@router.get("/chains", response_model=ChainsResponse, responses=responses("chains", 400, 401, 429))
async def list_chains(
    runtime: RuntimeDep,
    include_chains: Annotated[
        str | None, Query(alias="includeChains", description="Comma-separated chain ids")
    ] = None,
    referrer: Annotated[str | None, Query(description="Integrator name; accepted, unused")] = None,
) -> ChainsResponse:
    wanted = parse_chain_ids(include_chains) if include_chains else None
    return ChainsResponse(chains=await live_records(runtime, wanted))
