"""A nonce mapping (POST /authorize): a wallet's EIP-712 statement that its transfer with a
given nonce pays a given request, so a deposit without room for the request id (a perps
exchange's transfer carries only a nonce) is still matched to its request.

Domain `{name: "CrossfillNonceMapping", version: "2", chainId: signatureChainId,
verifyingContract: 0x0}`; type `NonceMapping(string chainId,address wallet,address depositor,
bytes32 id,uint256 nonce)`, where `chainId` is the wallet's chain id as a decimal string.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_account.messages import SignableMessage, encode_typed_data

from crossfill.domain.eip712 import eip712_domain, eip712_types
from crossfill.domain.typed_signatures import check_signer
from crossfill.types import Address, ChainId

DOMAIN_NAME = "CrossfillNonceMapping"
DOMAIN_VERSION = "2"
PRIMARY_TYPE = "NonceMapping"
NONCE_MAPPING_TYPES = eip712_types(
    f"{PRIMARY_TYPE}(string chainId,address wallet,address depositor,bytes32 id,uint256 nonce)"
)


class InvalidMappingSignature(ValueError):
    """The signature is malformed, or not the wallet's over this mapping."""


@dataclass(frozen=True)
class NonceMapping:
    """`wallet` (on `wallet_chain_id`) says: my transfer with `nonce` pays request `request_id`,
    deposited by `depositor`; signed under `signature_chain_id`."""

    wallet_chain_id: ChainId
    wallet: Address
    depositor: Address
    request_id: str
    nonce: int
    signature_chain_id: ChainId

    def domain(self) -> dict[str, Any]:
        return eip712_domain(DOMAIN_NAME, DOMAIN_VERSION, self.signature_chain_id)

    def message(self) -> dict[str, Any]:
        return {
            "chainId": str(self.wallet_chain_id),
            "wallet": self.wallet,
            "depositor": self.depositor,
            "id": self.request_id,
            "nonce": self.nonce,
        }

    def _signable(self) -> SignableMessage:
        return encode_typed_data(
            full_message={
                "domain": self.domain(),
                "types": NONCE_MAPPING_TYPES,
                "primaryType": PRIMARY_TYPE,
                "message": self.message(),
            }
        )

    def check_signature(self, signature: str) -> None:
        """Raise InvalidMappingSignature unless `signature` is the wallet's over this mapping."""
        check_signer(
            self._signable(), signature, self.wallet, refused=InvalidMappingSignature,
            what="signature: the nonce mapping",
        )  # fmt: skip
