"""A request's attestation: the solver wallet's signature over its deposited facts.

Only a deposit that stands is attested: the spec fixes the signed values (no status among
them), so a contract that trusts the signature takes the origin amount as paid. A request
that failed (its deposit due back) or was refunded is refused with the code saying which.
"""

from __future__ import annotations

import re

from crossfill.domain.attestation import Attestation, address_word
from crossfill.domain.status import RequestStatus
from crossfill.errors import BadRequest, NotFound
from crossfill.runtime import Runtime
from crossfill.store import deposits, requests

_HEX_WORD = re.compile(r"0x[0-9a-fA-F]{1,64}", re.ASCII)
NOT_DEPOSITED = "REQUEST_NOT_DEPOSITED"
REFUNDED = "REQUEST_REFUNDED"
FAILED = "REQUEST_FAILED"


class NotAttested(BadRequest):
    """400: the request has no deposit that stands (`code` says why)."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message, error_code=code)
        self.code = code

    def body(self) -> dict[str, object]:
        # The compat notes' shape of this 400 is {message, code}; ours adds it beside errorCode.
        return {**super().body(), "code": self.code}


def _word(value: str, field: str) -> str:
    """An attested address: 0x-hex of at most 32 bytes (EVM), or base58 of 32 (SVM)."""
    if _HEX_WORD.fullmatch(value) is not None or _svm_address(value):
        return value
    raise BadRequest(f"{field} {value} is neither an EVM nor an SVM address")


def _svm_address(value: str) -> bool:
    try:
        address_word(value)
    except ValueError:
        return False
    return not value.startswith("0x")


async def attestation_of(runtime: Runtime, request_id: str) -> Attestation:
    """The attested facts of a request whose deposit was accepted and stands (NotFound,
    NotAttested)."""
    async with runtime.sessions() as session:
        request = await requests.get(session, request_id.lower())
        if request is None:
            raise NotFound(f"request {request_id} not found")
        deposit = await deposits.accepted_for(session, request.id)
    if request.status == RequestStatus.REFUND or (deposit and deposit.refund_status):
        raise NotAttested(f"request {request.id} was refunded: nothing stands paid", code=REFUNDED)
    if request.status == RequestStatus.FAILURE:
        raise NotAttested(
            f"request {request.id} failed: its deposit is not paid for it", code=FAILED
        )
    if deposit is None:
        raise NotAttested(f"request {request.id} has no accepted deposit yet", code=NOT_DEPOSITED)
    return Attestation(
        request_id=request.id,
        origin_chain_id=deposit.chain_id,
        origin_user=_word(deposit.depositor, "originUser"),
        origin_currency=_word(deposit.currency, "originCurrency"),
        origin_amount=int(deposit.amount),
        destination_chain_id=request.destination_chain_id,
        destination_user=_word(request.recipient, "destinationUser"),
    )


async def signed_attestation(runtime: Runtime, request_id: str) -> tuple[Attestation, str]:
    """The request's attestation and the solver wallet's signature of it."""
    attestation = await attestation_of(runtime, request_id)
    return attestation, attestation.sign(runtime.solver_account)
