"""POST /transactions/index and /transactions/single: clients telling us about their deposits."""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from pydantic import BaseModel, StrictInt, StrictStr

from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.schemas.responses import Accepted
from crossfill.errors import BadRequest
from crossfill.store import deposit_hints

router = APIRouter(tags=["transactions"])
ACCEPTED = responses(Accepted, 400, 401, 429)
_TX_HASH = re.compile(r"^0x[0-9a-fA-F]{64}$")


class IndexBody(BaseModel):
    txHash: str
    chainId: StrictStr | StrictInt
    referrer: str | None = None


class SingleBody(BaseModel):
    tx: str
    chainId: StrictStr | StrictInt
    requestId: str | None = None
    referrer: str | None = None


def _chain_id(runtime: RuntimeDep, value: str | int) -> int:
    text = str(value)
    if not text.isdigit() or int(text) not in runtime.chains:
        raise BadRequest(
            f"chainId {value!r} is not a supported chain", error_code="UNSUPPORTED_CHAIN"
        )
    return int(text)


@router.post("/transactions/index", response_model=None, responses=ACCEPTED)
async def index_transaction(
    body: IndexBody, runtime: RuntimeDep, request: Request
) -> dict[str, str]:
    """A hint: the indexer fetches this receipt at once instead of waiting for its next scan.
    An API replica (no indexers of its own) forwards it to the process that runs them."""
    chain_id = _chain_id(runtime, body.chainId)
    if not _TX_HASH.match(body.txHash):
        raise BadRequest("txHash must be a 0x-prefixed 32-byte hex hash")
    workers = request.app.state.workers
    if workers is not None:
        workers.hint(chain_id, body.txHash.lower())
    else:
        await deposit_hints.forward(runtime.engine, chain_id, body.txHash.lower())
    return {"message": "Success"}


@router.post("/transactions/single", response_model=None, responses=ACCEPTED)
async def index_single(body: SingleBody, runtime: RuntimeDep) -> dict[str, str]:
    """Accepted for SDK compatibility (same-chain flows); deposits are found by the indexer."""
    _chain_id(runtime, body.chainId)
    return {"message": "Success"}
