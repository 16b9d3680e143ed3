"""A request's attestation (GET /requests/{requestId}/signature): what the solver wallet
vouches for about a deposited request, in a form a contract can recompute.

The seven values are ABI-encoded as (bytes32, uint256, bytes32, bytes32, uint256, uint256,
bytes32), addresses left-padded to 32 bytes; the keccak256 of that encoding is signed as an
EIP-191 personal message (`"\\x19Ethereum Signed Message:\\n32" || hash`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_abi.abi import encode
from eth_account.messages import encode_defunct
from eth_account.signers.local import LocalAccount
from eth_utils.crypto import keccak

ENCODED_TYPES = ("bytes32", "uint256", "bytes32", "bytes32", "uint256", "uint256", "bytes32")


def _word(hex_value: str) -> bytes:
    """A 0x-hex value (an address or a bytes32) left-padded to 32 bytes."""
    raw = bytes.fromhex(hex_value.removeprefix("0x"))
    if len(raw) > 32:
        raise ValueError(f"{hex_value} is longer than 32 bytes")
    return raw.rjust(32, b"\0")


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
                _word(self.request_id),
                self.origin_chain_id,
                _word(self.origin_user),
                _word(self.origin_currency),
                self.origin_amount,
                self.destination_chain_id,
                _word(self.destination_user),
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
