"""An exclusive order's fill terms (docs/solvers.md): what the operator's solver signs so the
Filler lets only the winning solver fill the order until its exclusivity deadline, and anyone
it allows after (`Filler.fillExclusive`). EIP-712, domain `CrossfillFiller`/`1` on the
destination chain, verifying contract its Filler; the payments are bound by their hash,
keccak256 of their ABI encoding as `fillExclusive` takes them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from eth_abi.abi import encode
from eth_account.messages import SignableMessage, encode_typed_data
from eth_utils.crypto import keccak

from crossfill.domain.eip712 import EIP712_DOMAIN, eip712_domain, eip712_types
from crossfill.domain.fill_plan import Payment

DOMAIN_NAME: Final = "CrossfillFiller"
DOMAIN_VERSION: Final = "1"
EXCLUSIVE_FILL_TYPE: Final = (
    "ExclusiveFill(bytes32 orderId,address solver,uint256 exclusivityDeadline,"
    "uint256 fillDeadline,bytes32 paymentsHash)"
)
_PAYMENTS: Final = "(address,address,uint256)[]"


def payments_hash(payments: tuple[Payment, ...]) -> bytes:
    """keccak256(abi.encode(payments)), as the Filler hashes them."""
    rows = [(p.recipient, p.currency, p.amount) for p in payments]
    return keccak(encode([_PAYMENTS], [rows]))


@dataclass(frozen=True)
class ExclusiveFill:
    """An order only `solver` may fill until `exclusivity_deadline` (Unix seconds), paying
    exactly `payments`, by `fill_deadline`, on chain `chain_id` through `filler`."""

    chain_id: int
    filler: str
    order_id: str
    solver: str
    exclusivity_deadline: int
    fill_deadline: int
    payments: tuple[Payment, ...]

    def exclusivity(self) -> tuple[str, int, int]:
        """The `Exclusivity` struct `fillExclusive` takes."""
        return (self.solver, self.exclusivity_deadline, self.fill_deadline)

    def typed_data(self) -> dict[str, Any]:
        return {
            "types": eip712_types(EIP712_DOMAIN, EXCLUSIVE_FILL_TYPE),
            "primaryType": "ExclusiveFill",
            "domain": eip712_domain(DOMAIN_NAME, DOMAIN_VERSION, self.chain_id, self.filler),
            "message": {
                "orderId": self.order_id,
                "solver": self.solver,
                "exclusivityDeadline": self.exclusivity_deadline,
                "fillDeadline": self.fill_deadline,
                "paymentsHash": payments_hash(self.payments),
            },
        }

    def signable(self) -> SignableMessage:
        return encode_typed_data(full_message=self.typed_data())
