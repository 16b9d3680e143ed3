"""The solver's attestation of a deposited request (`GET /requests/{requestId}/signature`)."""

from __future__ import annotations

from crossfill_client.models._base import WireModel


class AttestedRequest(WireModel):
    """What is signed: origin chain, depositor, currency and amount deposited, destination
    chain and recipient (`origin_amount` in the currency's smallest unit)."""

    origin_chain_id: int
    origin_user: str
    origin_currency: str
    origin_amount: int
    destination_chain_id: int
    destination_user: str


class Attestation(WireModel):
    """`signature`: EIP-191 over keccak256 of the ABI-encoded request data, by the solver."""

    request_data: AttestedRequest
    signature: str
