"""A request's attestation: the solver wallet's signature over its deposited facts."""

from __future__ import annotations

import re

from crossfill.domain.attestation import Attestation
from crossfill.errors import BadRequest, NotFound
from crossfill.runtime import Runtime
from crossfill.store import deposits, requests

_HEX_WORD = re.compile(r"0x[0-9a-fA-F]{1,64}", re.ASCII)
NOT_DEPOSITED = "REQUEST_NOT_DEPOSITED"


class NotYetDeposited(BadRequest):
    """400: nothing to attest until the request's deposit is accepted."""

    error_code = NOT_DEPOSITED

    def body(self) -> dict[str, object]:
        # The compat notes' shape of this 400 is {message, code}; ours adds it beside errorCode.
        return {**super().body(), "code": NOT_DEPOSITED}


def _hex_word(value: str, field: str) -> str:
    if _HEX_WORD.fullmatch(value) is None:
        raise BadRequest(f"{field} {value} is not an EVM address; only EVM requests are attested")
    return value


async def attestation_of(runtime: Runtime, request_id: str) -> Attestation:
    """The attested facts of a request whose deposit was accepted (NotFound, NotYetDeposited)."""
    async with runtime.sessions() as session:
        request = await requests.get(session, request_id.lower())
        if request is None:
            raise NotFound(f"request {request_id} not found")
        deposit = await deposits.accepted_for(session, request.id)
    if deposit is None:
        raise NotYetDeposited(f"request {request.id} has no accepted deposit yet")
    return Attestation(
        request_id=request.id,
        origin_chain_id=deposit.chain_id,
        origin_user=_hex_word(deposit.depositor, "originUser"),
        origin_currency=_hex_word(deposit.currency, "originCurrency"),
        origin_amount=int(deposit.amount),
        destination_chain_id=request.destination_chain_id,
        destination_user=_hex_word(request.recipient, "destinationUser"),
    )


async def signed_attestation(runtime: Runtime, request_id: str) -> tuple[Attestation, str]:
    """The request's attestation and the solver wallet's signature of it."""
    attestation = await attestation_of(runtime, request_id)
    return attestation, attestation.sign(runtime.solver_account)
