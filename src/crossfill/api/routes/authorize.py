"""POST /authorize: a wallet's signed nonce mapping (step `authorize` of a perps withdrawal)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query

from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.schemas.authorize import NonceMappingBody
from crossfill.api.schemas.responses import Accepted
from crossfill.app.nonce_mappings import authorize

router = APIRouter(tags=["authorize"])


@router.post("/authorize", response_model=None, responses=responses(Accepted, 400, 404, 409, 429))
async def authorize_nonce_mapping(
    body: NonceMappingBody,
    runtime: RuntimeDep,
    signature: Annotated[
        str,
        Query(description="The wallet's EIP-712 NonceMapping signature, 0x-hex", max_length=200),
    ],
) -> dict[str, str]:
    """Store (wallet, nonce) → request id, once, if the wallet signed it; the same mapping
    again is accepted, the nonce mapped to another request is a 409."""
    await authorize(runtime, body.to_mapping(), signature, now=datetime.now(UTC))
    return {"message": "Nonce mapping authorized"}
