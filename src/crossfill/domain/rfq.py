"""The RFQ messages (docs/solvers.md): the service's signed bid request, a solver's signed
firm bid, what makes a bid valid, and which bid wins. EIP-712, domain `CrossfillRfq`/`1` on
the destination chain, verifying contract its `SolverBond`."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from eth_account.messages import SignableMessage, encode_typed_data

from crossfill.domain.eip712 import EIP712_DOMAIN, eip712_domain, eip712_types
from crossfill.domain.solvers import Ask
from crossfill.domain.typed_signatures import UnrecoverableSignature, signer_of
from crossfill.types import Address

DOMAIN_NAME: Final = "CrossfillRfq"
DOMAIN_VERSION: Final = "1"
BID_REQUEST_TYPE: Final = (
    "BidRequest(bytes32 quoteId,uint256 originChainId,uint256 destinationChainId,"
    "address currencyIn,address currencyOut,uint256 amountIn,address recipient,uint256 expiry)"
)
BID_TYPE: Final = "Bid(bytes32 quoteId,address solver,uint256 output,uint256 expiry)"
_UINT256_MAX: Final = 2**256 - 1


def rfq_domain(destination_chain_id: int, solver_bond: str) -> dict[str, Any]:
    return eip712_domain(DOMAIN_NAME, DOMAIN_VERSION, destination_chain_id, solver_bond)


def request_message(ask: Ask) -> dict[str, Any]:
    return {
        "quoteId": ask.quote_id,
        "originChainId": ask.origin_chain_id,
        "destinationChainId": ask.destination_chain_id,
        "currencyIn": ask.currency_in,
        "currencyOut": ask.currency_out,
        "amountIn": ask.amount_in,
        "recipient": ask.recipient,
        "expiry": ask.expiry,
    }


def request_typed_data(ask: Ask, solver_bond: str) -> dict[str, Any]:
    return {
        "types": eip712_types(EIP712_DOMAIN, BID_REQUEST_TYPE),
        "primaryType": "BidRequest",
        "domain": rfq_domain(ask.destination_chain_id, solver_bond),
        "message": request_message(ask),
    }


@dataclass(frozen=True)
class Bid:
    """A solver's firm offer: it pays `output` of the ask's output currency for the ask's
    input, until `expiry` (Unix seconds)."""

    quote_id: str
    solver: Address
    output: int
    expiry: int
    signature: str

    def typed_data(self, destination_chain_id: int, solver_bond: str) -> dict[str, Any]:
        return {
            "types": eip712_types(EIP712_DOMAIN, BID_TYPE),
            "primaryType": "Bid",
            "domain": rfq_domain(destination_chain_id, solver_bond),
            "message": {
                "quoteId": self.quote_id,
                "solver": self.solver,
                "output": self.output,
                "expiry": self.expiry,
            },
        }

    def signable(self, destination_chain_id: int, solver_bond: str) -> SignableMessage:
        return encode_typed_data(full_message=self.typed_data(destination_chain_id, solver_bond))


class BidRefusal(StrEnum):
    """Why a bid answered is not taken."""

    WRONG_QUOTE = "wrong_quote"
    WRONG_SOLVER = "wrong_solver"
    BAD_OUTPUT = "bad_output"
    EXPIRES_TOO_SOON = "expires_too_soon"
    BAD_SIGNATURE = "bad_signature"
    ABOVE_BOND = "above_bond"
    MALFORMED = "malformed"
    NO_ANSWER = "no_answer"


def bid_refusal(bid: Bid, ask: Ask, *, registered: Address, solver_bond: str) -> BidRefusal | None:
    """Why `bid`, answered by the solver registered as `registered`, is not valid for `ask`
    (None: it is): another quote, another solver, an output out of range, an expiry before the
    quote's, or a signature not by `registered`."""
    if bid.quote_id.lower() != ask.quote_id.lower():
        return BidRefusal.WRONG_QUOTE
    if bid.solver.lower() != registered.lower():
        return BidRefusal.WRONG_SOLVER
    if not 0 < bid.output <= _UINT256_MAX:
        return BidRefusal.BAD_OUTPUT
    if bid.expiry < ask.expiry:
        return BidRefusal.EXPIRES_TOO_SOON
    try:
        signer = signer_of(bid.signable(ask.destination_chain_id, solver_bond), bid.signature)
    except UnrecoverableSignature:
        return BidRefusal.BAD_SIGNATURE
    if signer.lower() != registered.lower():
        return BidRefusal.BAD_SIGNATURE
    return None


@dataclass(frozen=True)
class Offer:
    """A valid bid, with the order its solver is asked in (ties go to the earlier)."""

    solver_id: int
    solver_name: str
    bid: Bid
    rank: int


def winner(offers: list[Offer], *, operator_output: int) -> Offer | None:
    """The valid bid paying the most, if it pays more than the operator's own price."""
    best = max(offers, key=lambda offer: (offer.bid.output, -offer.rank), default=None)
    return best if best is not None and best.bid.output > operator_output else None
