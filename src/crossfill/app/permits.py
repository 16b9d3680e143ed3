"""Accept a `usePermit` quote's signed deposit authorization (`POST /execute/permits`).

The signature must be the quoting user's over the very authorization the quote asked for
(this request's order as nonce, its amount, its Depository, its time bound): anything else is
refused now, rather than left to revert on chain. A checked signature is stored; the origin
chain's permit depositor (`kinds.evm.permit_depositor`) sends the deposit.
"""

from __future__ import annotations

from datetime import UTC, datetime

from crossfill.domain.deposit_authorization import SIGNATURE_KIND, DepositAuthorization
from crossfill.domain.identifiers import InvalidIdentifier, parse_hex_bytes, parse_tx_hash
from crossfill.domain.status import RequestStatus
from crossfill.errors import BadRequest, NotFound
from crossfill.kinds.evm.chain import evm_chains
from crossfill.kinds.evm.config import ChainConfig
from crossfill.runtime import Runtime
from crossfill.store import commit_signals, permit_deposits, requests
from crossfill.store.tables import Request
from crossfill.types import ChainId

SIGNATURE_LENGTH = 65


def authorization_of(request: Request, chain: ChainConfig) -> DepositAuthorization | None:
    """The deposit authorization a request was quoted with; None when it was not a permit."""
    permit = (request.plan or {}).get("permit")
    currency = chain.currency(request.origin_currency)
    if not permit or currency is None:
        return None
    return DepositAuthorization(
        chain_id=chain.id,
        token=currency.address,
        token_name=currency.name,
        depositor=request.user_address,
        depository=chain.contracts.depository,
        amount=int(request.amount_in),
        valid_after=0,
        valid_before=int(permit["validBefore"]),
        order_id=request.order_id,
    )


def _parsed(request_id: str, signature: str, kind: str) -> tuple[str, bytes]:
    if kind != SIGNATURE_KIND:
        raise BadRequest(f"kind must be {SIGNATURE_KIND!r}", error_code="INVALID_SIGNATURE")
    try:
        request_id = parse_tx_hash(request_id, "requestId")
        signed = parse_hex_bytes(signature, "signature")
    except InvalidIdentifier as exc:
        raise BadRequest(str(exc), error_code="INVALID_SIGNATURE") from None
    if len(signed) != SIGNATURE_LENGTH:
        raise BadRequest("signature must be 65 bytes (r, s, v)", error_code="INVALID_SIGNATURE")
    return request_id, signed


async def accept_permit(runtime: Runtime, request_id: str, signature: str, kind: str) -> None:
    """Check and store the signature; posting the same one again is accepted again."""
    request_id, signed = _parsed(request_id, signature, kind)
    now = datetime.now(UTC)
    async with runtime.sessions() as session, session.begin():
        request = await requests.get(session, request_id)
        if request is None:
            raise NotFound(f"request {request_id} not found")
        chain = evm_chains(runtime).get(ChainId(request.origin_chain_id))
        authorization = None if chain is None else authorization_of(request, chain.config)
        if authorization is None:
            raise BadRequest(f"request {request_id} was not quoted with usePermit")
        stored = await permit_deposits.get(session, request_id)
        if stored is not None:
            if stored.signature != "0x" + signed.hex():
                raise BadRequest("another signature was already accepted for this request")
            return
        if request.status != RequestStatus.WAITING:
            raise BadRequest(f"request {request_id} is {request.status}, not waiting")
        if authorization.valid_before <= now.timestamp():
            raise BadRequest(
                "the authorization has expired; ask for a new quote", error_code="SIGNATURE_EXPIRED"
            )
        signer = authorization.signer(signed)
        if signer is None or signer.lower() != request.user_address.lower():
            raise BadRequest(
                "the signature is not the quote's user's over its deposit authorization",
                error_code="INVALID_SIGNATURE",
            )
        session.add(permit_deposits.signed(request_id, authorization, signed, now=now))
        commit_signals.PERMIT_DEPOSITS.mark(session.sync_session)  # the depositor, once stored
