"""POST /transactions/index and /transactions/single: clients telling us about their deposits."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, StrictInt, StrictStr

from crossfill.api.auth import CallerDep
from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.schemas.responses import Accepted
from crossfill.domain.identifiers import InvalidIdentifier, parse_chain_id, parse_tx_hash
from crossfill.errors import BadRequest
from crossfill.kinds.evm.chain import evm_chains
from crossfill.store import deposit_hints
from crossfill.types import ChainId

router = APIRouter(tags=["transactions"])
ACCEPTED = responses(Accepted, 400, 401, 429)


class IndexBody(BaseModel):
    txHash: str
    chainId: StrictStr | StrictInt
    referrer: str | None = None


class SingleBody(BaseModel):
    tx: str
    chainId: StrictStr | StrictInt
    requestId: str | None = None
    referrer: str | None = None


def _chain_id(runtime: RuntimeDep, value: str | int) -> ChainId:
    try:
        chain_id = parse_chain_id(value)
    except InvalidIdentifier:
        chain_id = None
    if chain_id is None or chain_id not in evm_chains(runtime):
        shown = value if isinstance(value, int) else value[:80]
        raise BadRequest(
            f"chainId {shown!r} is not a supported chain", error_code="UNSUPPORTED_CHAIN"
        )
    return chain_id


@router.post("/transactions/index", response_model=None, responses=ACCEPTED)
async def index_transaction(
    body: IndexBody, runtime: RuntimeDep, request: Request, caller: CallerDep
) -> dict[str, str]:
    """A hint: the indexer fetches this receipt at once instead of waiting for its next scan,
    within the RPC calls the caller's hints may make per minute (past them the hint is
    dropped: the scan finds the deposit). An API replica (no indexers of its own) forwards it
    to the process that runs them."""
    chain_id = _chain_id(runtime, body.chainId)
    try:
        tx_hash = parse_tx_hash(body.txHash)
    except InvalidIdentifier as exc:
        raise BadRequest(str(exc)) from None
    workers = request.app.state.workers
    if workers is not None:
        workers.hint(chain_id, tx_hash, caller.bucket)
    else:
        await deposit_hints.forward(runtime.engine, chain_id, tx_hash, caller.bucket)
    return {"message": "Success"}


@router.post("/transactions/single", response_model=None, responses=ACCEPTED)
async def index_single(body: SingleBody, runtime: RuntimeDep) -> dict[str, str]:
    """Accepted for SDK compatibility (same-chain flows); deposits are found by the indexer."""
    _chain_id(runtime, body.chainId)
    return {"message": "Success"}
