"""The fill of an order an external solver won (docs/solvers.md): its terms as the Filler
checks them (`domain.exclusive_fill`), signed by the operator's solver key, and the
`Filler.fillExclusive` call that carries them, whether the winner sends it or the operator's
own solver does after the exclusivity deadline (the fallback)."""

from __future__ import annotations

from dataclasses import dataclass

from eth_account.signers.local import LocalAccount
from eth_utils.address import to_checksum_address

from crossfill.app.fills import stored_fill_plan
from crossfill.contracts import calldata
from crossfill.domain.exclusive_fill import ExclusiveFill
from crossfill.kinds.evm.config import ChainConfig
from crossfill.store.db import as_utc
from crossfill.store.tables import Request


@dataclass(frozen=True)
class SignedExclusiveFill:
    terms: ExclusiveFill
    signature: bytes

    def calldata(self) -> bytes:
        terms = self.terms
        return calldata.filler_fill_exclusive(
            bytes.fromhex(terms.order_id[2:]),
            [(p.recipient, p.currency, p.amount) for p in terms.payments],
            terms.exclusivity(),
            self.signature,
        )


def exclusive_until(request: Request) -> int | None:
    """The end of the request's exclusivity (Unix seconds); None when the operator fills it."""
    if request.exclusive_solver is None or request.exclusivity_deadline is None:
        return None
    return int(as_utc(request.exclusivity_deadline).timestamp())


def exclusivity_over(request: Request, head_timestamp: int) -> bool:
    """Whether the operator may fill the request now: no solver won it, or a block after its
    exclusivity deadline is mined (the fallback's fill goes in the next)."""
    until = exclusive_until(request)
    return until is None or head_timestamp > until


def exclusive_terms(request: Request, chain: ChainConfig) -> ExclusiveFill | None:
    """What the Filler lets the request's exclusive solver fill, as its plan pays it."""
    until = exclusive_until(request)
    if until is None or request.exclusive_solver is None:
        return None
    plan = stored_fill_plan(request, chain)
    return ExclusiveFill(
        chain_id=chain.id,
        filler=chain.contracts.filler,
        order_id=request.order_id,
        solver=to_checksum_address(request.exclusive_solver),
        exclusivity_deadline=until,
        fill_deadline=plan.deadline,
        payments=plan.payments,
    )


def signed_terms(terms: ExclusiveFill, signer: LocalAccount) -> SignedExclusiveFill:
    """The terms signed by the operator's solver key (the Filler's `solver`)."""
    return SignedExclusiveFill(terms, bytes(signer.sign_message(terms.signable()).signature))
