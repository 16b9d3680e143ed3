"""GET /requests/{requestId}/signature: the solver wallet's attestation of a deposit that stands."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.params import RequestIdPath
from crossfill.api.schemas.responses import RequestSignature
from crossfill.app.attestations import signed_attestation

router = APIRouter(tags=["requests"])


@router.get(
    "/requests/{requestId}/signature",
    response_model=None,
    responses=responses(RequestSignature, 400, 404, 429),
)
async def request_signature(request_id: RequestIdPath, runtime: RuntimeDep) -> dict[str, Any]:
    """The deposited facts of the request, signed by the solver wallet (EIP-191 over the
    keccak256 of their ABI encoding); 400 until the deposit is accepted, and once the request
    failed or was refunded (`code` says which)."""
    attestation, signature = await signed_attestation(runtime, request_id)
    return {"requestData": attestation.request_data(), "signature": signature}
