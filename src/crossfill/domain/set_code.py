"""EIP-7702 authorizations: an account's signed word that its code points at a contract.

The signed hash is `keccak256(0x05 || rlp([chain_id, address, nonce]))`; its signer (the
authority) is recovered from `(y_parity, r, s)`, with `s` in the lower half of the curve order
as the EIP requires. A chain applies an authorization only while the authority's nonce equals
its `nonce`, and only if `chain_id` is 0 (any chain) or its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_keys.datatypes import Signature
from eth_keys.exceptions import BadSignature
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak

from crossfill.types import Address

SET_CODE_MAGIC = b"\x05"
SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
# EIP-7702 bounds: chain id below 2**256, nonce below 2**64.
UINT256_LIMIT = 2**256
NONCE_LIMIT = 2**64
# An account whose code is this prefix and a 20-byte address runs that address's code.
DELEGATION_PREFIX = bytes.fromhex("ef0100")


def is_delegated(code: bytes) -> bool:
    """Whether an account's code is an EIP-7702 delegation designator."""
    return len(code) == len(DELEGATION_PREFIX) + 20 and code.startswith(DELEGATION_PREFIX)


def _rlp_length(length: int, short_offset: int) -> bytes:
    if length <= 55:
        return bytes([short_offset + length])
    size = length.to_bytes((length.bit_length() + 7) // 8, "big")
    return bytes([short_offset + 55 + len(size)]) + size


def _rlp_bytes(value: bytes) -> bytes:
    if len(value) == 1 and value[0] < 0x80:
        return value
    return _rlp_length(len(value), 0x80) + value


def _rlp_int(value: int) -> bytes:
    return _rlp_bytes(value.to_bytes((value.bit_length() + 7) // 8, "big"))


def _rlp_list(items: list[bytes]) -> bytes:
    payload = b"".join(items)
    return _rlp_length(len(payload), 0xC0) + payload


class InvalidAuthorization(ValueError):
    """The authorization's signature cannot be recovered, or is out of the EIP's bounds."""


@dataclass(frozen=True)
class Authorization:
    """One entry of a type-4 transaction's authorization list."""

    chain_id: int
    address: Address
    nonce: int
    y_parity: int
    r: int
    s: int

    def signing_hash(self) -> bytes:
        payload = _rlp_list(
            [
                _rlp_int(self.chain_id),
                _rlp_bytes(bytes.fromhex(self.address[2:])),
                _rlp_int(self.nonce),
            ]
        )
        return keccak(SET_CODE_MAGIC + payload)

    def authority(self) -> Address:
        """The account that signed this authorization (InvalidAuthorization if none did)."""
        if self.y_parity not in (0, 1) or not 0 < self.r < SECP256K1_N:
            raise InvalidAuthorization("yParity must be 0 or 1 and r within the curve order")
        if not 0 < self.s <= SECP256K1_N // 2:
            raise InvalidAuthorization("s must be in the lower half of the curve order")
        try:
            signature = Signature(vrs=(self.y_parity, self.r, self.s))
            public_key = signature.recover_public_key_from_msg_hash(self.signing_hash())
        except (BadSignature, ValueError):
            raise InvalidAuthorization("the signature cannot be recovered") from None
        return Address(public_key.to_checksum_address())

    def for_signing(self) -> dict[str, Any]:
        """As eth-account's `sign_transaction` takes an `authorizationList` entry."""
        return {
            "chainId": self.chain_id,
            "address": self.address,
            "nonce": self.nonce,
            "yParity": self.y_parity,
            "r": self.r,
            "s": self.s,
        }

    def for_rpc(self) -> dict[str, str]:
        """As JSON-RPC calls (eth_estimateGas) take it: quantities in hex."""
        return {
            "chainId": hex(self.chain_id),
            "address": to_checksum_address(self.address),
            "nonce": hex(self.nonce),
            "yParity": hex(self.y_parity),
            "r": hex(self.r),
            "s": hex(self.s),
        }

    def to_json(self) -> dict[str, Any]:
        """Stored form (r and s as hex: they pass JSON's safe integers)."""
        return {**self.for_rpc(), "chainId": self.chain_id, "nonce": self.nonce}

    @classmethod
    def from_json(cls, stored: dict[str, Any]) -> Authorization:
        return cls(
            chain_id=int(stored["chainId"]),
            address=Address(stored["address"]),
            nonce=int(stored["nonce"]),
            y_parity=int(stored["yParity"], 16),
            r=int(stored["r"], 16),
            s=int(stored["s"], 16),
        )
