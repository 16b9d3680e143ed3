"""An app-fee claim as its wallet signs it (EIP-712): which owed shares, paid to whom.

The claim names the wallet's owed shares on one chain and currency up to a share id, and their
sum: filed, exactly those shares are paid, or none (the balance changed; claim again). Its
EIP-712 hash is the claim's id, so one signature files one claim.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_account.messages import SignableMessage, encode_typed_data
from eth_utils.crypto import keccak

from crossfill.domain.eip712 import eip712_types
from crossfill.domain.typed_signatures import check_signer
from crossfill.types import Address

DOMAIN_NAME = "CrossfillAppFees"
DOMAIN_VERSION = "1"
PRIMARY_TYPE = "AppFeeClaim"
CLAIM_TYPES = eip712_types(
    f"{PRIMARY_TYPE}(address wallet,address recipient,uint256 chainId,address currency,"
    "uint256 amount,uint256 throughFeeId,uint256 expiry)"
)


class InvalidClaimSignature(ValueError):
    """The signature is malformed, or not the claiming wallet's."""


@dataclass(frozen=True)
class ClaimTerms:
    """What the wallet signs: its owed shares with ids up to `through_fee_id`, summing to
    `amount`, paid to `recipient` if filed before `expiry` (unix seconds)."""

    wallet: Address
    recipient: Address
    chain_id: int
    currency: Address
    amount: int
    through_fee_id: int
    expiry: int

    def message(self) -> dict[str, Any]:
        """The EIP-712 message as JSON (the amount as a decimal string: it may pass 2**53)."""
        return {
            "wallet": self.wallet,
            "recipient": self.recipient,
            "chainId": self.chain_id,
            "currency": self.currency,
            "amount": str(self.amount),
            "throughFeeId": self.through_fee_id,
            "expiry": self.expiry,
        }

    def domain(self) -> dict[str, Any]:
        return {"name": DOMAIN_NAME, "version": DOMAIN_VERSION, "chainId": self.chain_id}

    def _signable(self) -> SignableMessage:
        message = {**self.message(), "amount": self.amount}
        return encode_typed_data(
            full_message={
                "domain": self.domain(),
                "types": CLAIM_TYPES,
                "primaryType": PRIMARY_TYPE,
                "message": message,
            }
        )

    def claim_id(self) -> str:
        """The EIP-712 hash of these terms: the claim's id."""
        signable = self._signable()
        digest = keccak(b"\x19" + signable.version + signable.header + signable.body)
        return "0x" + digest.hex()

    def check_signature(self, signature: str) -> None:
        """Raise InvalidClaimSignature unless `signature` is the wallet's over these terms."""
        check_signer(
            self._signable(), signature, self.wallet, refused=InvalidClaimSignature,
            what="the claim",
        )  # fmt: skip
