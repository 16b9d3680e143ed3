"""A request's attestation (GET /requests/{requestId}/signature): what the solver wallet
vouches for about a deposited request, in a form a contract can recompute.

The seven values are ABI-encoded as (bytes32, uint256, bytes32, bytes32, uint256, uint256,
bytes32), EVM addresses left-padded to 32 bytes, SVM addresses (base58) as their 32 bytes;
the keccak256 of that encoding is signed as an EIP-191 personal message
(`"\\x19Ethereum Signed Message:\\n32" || hash`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import base58
from eth_abi.abi import encode
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from eth_utils.crypto import keccak

ENCODED_TYPES = ("bytes32", "uint256", "bytes32", "bytes32", "uint256", "uint256", "bytes32")


def address_word(value: str) -> bytes:
    """An address as its bytes32: a 0x-hex value (an EVM address or a bytes32) left-padded to
    32 bytes, or an SVM address (base58 of 32 bytes) as those bytes. ValueError for anything
    else."""
    if value.startswith("0x"):
        raw = bytes.fromhex(value.removeprefix("0x"))
        if len(raw) > 32:
            raise ValueError(f"{value} is longer than 32 bytes")
        return raw.rjust(32, b"\0")
    raw = base58.b58decode(value)
    if len(raw) != 32:
        raise ValueError(f"{value} is no SVM address (base58 of 32 bytes)")
    return raw


@dataclass(frozen=True)
class Attestation:
    """The deposited facts of a request: who paid how much of what, for whom, where."""

    request_id: str
    origin_chain_id: int
    origin_user: str
    origin_currency: str
    origin_amount: int
    destination_chain_id: int
    destination_user: str

    def encoded(self) -> bytes:
        return encode(
            list(ENCODED_TYPES),
            [
                address_word(self.request_id),
                self.origin_chain_id,
                address_word(self.origin_user),
                address_word(self.origin_currency),
                self.origin_amount,
                self.destination_chain_id,
                address_word(self.destination_user),
            ],
        )

    def digest(self) -> bytes:
        """keccak256 of the encoding: the 32 bytes the solver signs."""
        return keccak(self.encoded())

    def sign(self, signer: LocalAccount) -> str:
        """The signer's EIP-191 personal signature over the digest, 0x-hex (65 bytes)."""
        signed = signer.sign_message(encode_defunct(primitive=self.digest()))
        return "0x" + bytes(signed.signature).hex()

    def request_data(self) -> dict[str, Any]:
        """The wire `requestData` (amounts as decimal strings)."""
        return {
            "originChainId": self.origin_chain_id,
            "originUser": self.origin_user,
            "originCurrency": self.origin_currency,
            "originAmount": str(self.origin_amount),
            "destinationChainId": self.destination_chain_id,
            "destinationUser": self.destination_user,
        }
