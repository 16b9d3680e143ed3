"""What an external solver is told of the orders it won (docs/solvers.md): each paid order
not filled yet, with its fill terms signed by the operator's solver, ready for
`Filler.fillExclusive` on its destination."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crossfill.app.exclusive_fills import SignedExclusiveFill, exclusive_terms, signed_terms
from crossfill.kinds.evm.chain import evm_chains
from crossfill.runtime import Runtime
from crossfill.store import requests
from crossfill.types import NATIVE_EVM_ADDRESS, ChainId

# The most orders one answer lists (the oldest first).
LISTED = 100


@dataclass(frozen=True)
class WonOrder:
    request_id: str
    signed: SignedExclusiveFill

    def wire(self) -> dict[str, Any]:
        terms = self.signed.terms
        return {
            "requestId": self.request_id,
            "orderId": terms.order_id,
            "chainId": terms.chain_id,
            "filler": terms.filler,
            "solver": terms.solver,
            "exclusivityDeadline": terms.exclusivity_deadline,
            "fillDeadline": terms.fill_deadline,
            "payments": [
                {"recipient": p.recipient, "currency": p.currency, "amount": str(p.amount)}
                for p in terms.payments
            ],
            "value": str(sum(p.amount for p in terms.payments if p.currency == NATIVE_EVM_ADDRESS)),
            "signature": "0x" + self.signed.signature.hex(),
        }


async def won_orders(runtime: Runtime, solver: str) -> list[WonOrder]:
    """The paid orders `solver` won that are not filled yet, on the chains served here."""
    async with runtime.sessions() as session:
        rows = await requests.won_by(session, solver, limit=LISTED)
    chains = evm_chains(runtime)
    won = []
    for row in rows:
        chain = chains.get(ChainId(row.destination_chain_id))
        terms = None if chain is None else exclusive_terms(row, chain.config)
        if terms is not None:
            won.append(WonOrder(row.id, signed_terms(terms, runtime.solver_account)))
    return won
