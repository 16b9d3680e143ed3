"""GET /chains."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from crossfill.api.chain_view import ChainLiveStatus, chain_wire
from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.schemas.chains import ChainsResponse
from crossfill.domain.identifiers import InvalidIdentifier, parse_chain_id
from crossfill.errors import BadRequest
from crossfill.kinds.perps.view import perps_chain_wire
from crossfill.kinds.svm.view import svm_chain_wire
from crossfill.runtime import ChainRuntime, PerpsRuntime, SvmChainRuntime
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


def _live_status(
    chain: ChainRuntime | SvmChainRuntime | PerpsRuntime,
    control: ChainControl | None,
    now: float,
) -> ChainLiveStatus:
    operator_reason = control.reason if control is not None and control.disabled else None
    trouble = RPC_TROUBLE if chain.state.last_error is not None else None
    configured = (
        not chain.config.enabled if isinstance(chain, PerpsRuntime) else chain.config.disabled
    )
    return ChainLiveStatus(
        disabled=control.disabled if control is not None else configured,
        lagging=chain.state.lagging(now),
        status_message=operator_reason or chain.config.status_message or trouble,
    )


@router.get("/chains", response_model=ChainsResponse, responses=responses("chains", 400, 401, 429))
async def list_chains(
    runtime: RuntimeDep,
    include_chains: Annotated[
        str | None, Query(alias="includeChains", description="Comma-separated chain ids")
    ] = None,
    referrer: Annotated[str | None, Query(description="Integrator name; accepted, unused")] = None,
) -> ChainsResponse:
    wanted = parse_chain_ids(include_chains) if include_chains else None
    async with runtime.sessions() as session:
        controls = {
            control.chain_id: control for control in await chain_controls.all_controls(session)
        }
    now = runtime.clock()
    chains = [
        chain_wire(
            chain.config,
            _live_status(chain, controls.get(chain.config.id), now),
            solver_address=runtime.deployment.solver.address,
        )
        for chain in runtime.chains.values()
        if wanted is None or chain.config.id in wanted
    ]
    chains += [
        svm_chain_wire(chain.config, _live_status(chain, controls.get(chain.config.id), now))
        for chain in runtime.svm_chains.values()
        if wanted is None or chain.config.id in wanted
    ]
    perps = runtime.perps
    if perps is not None and (wanted is None or perps.config.id in wanted):
        chains.append(
            perps_chain_wire(perps.config, _live_status(perps, controls.get(perps.config.id), now))
        )
    return ChainsResponse(chains=chains)
