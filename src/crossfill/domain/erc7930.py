"""ERC-7930 interoperable addresses, as the Open Intents Framework's API writes assets and
accounts: one hex string naming a chain and an address on it.

Binary layout (version 1): version (2 bytes, big-endian, 1) | chain type (2 bytes; 0x0000 is
CAIP-2's `eip155`) | chain reference length (1 byte) | chain reference (the chain id,
big-endian: written with no leading zero byte, read with or without) | address length (1 byte)
| address. Only EVM accounts are served here: the `eip155` chain type with a 20-byte address and
a chain reference of 1 to 32 bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from eth_utils.address import to_checksum_address

from crossfill.types import Address

VERSION = 1
EIP155 = b"\x00\x00"
EVM_ADDRESS_BYTES = 20
_HEX = re.compile(r"0x([0-9a-fA-F]{2})+", re.ASCII)
# The longest an EVM interoperable address can be: 6 fixed bytes, a 32-byte chain reference.
_MAX_BYTES = 6 + 32 + EVM_ADDRESS_BYTES


class NotInteroperable(ValueError):
    """Not an ERC-7930 address Crossfill reads; the message says why."""


@dataclass(frozen=True)
class InteropAddress:
    """An EVM account on one chain."""

    chain_id: int
    address: Address

    @classmethod
    def of(cls, chain_id: int, address: str) -> InteropAddress:
        """`address` (0x-hex, any case) on chain `chain_id`."""
        return cls(chain_id, Address(to_checksum_address(address)))

    def encode(self) -> str:
        """Its hex form, `0x0001…` (the chain reference as short as the chain id allows)."""
        reference = self.chain_id.to_bytes(max(1, (self.chain_id.bit_length() + 7) // 8), "big")
        raw = (
            VERSION.to_bytes(2, "big")
            + EIP155
            + bytes([len(reference)])
            + reference
            + bytes([EVM_ADDRESS_BYTES])
            + bytes.fromhex(self.address[2:])
        )
        return "0x" + raw.hex()


def parse(text: str) -> InteropAddress:
    """The EVM account `text` names (NotInteroperable when it names none)."""
    if len(text) > 2 + 2 * _MAX_BYTES or _HEX.fullmatch(text) is None:
        raise NotInteroperable("not 0x-prefixed hex of an ERC-7930 address")
    raw = bytes.fromhex(text[2:])
    if len(raw) < 7:
        raise NotInteroperable("too short for an ERC-7930 address")
    if int.from_bytes(raw[:2], "big") != VERSION:
        raise NotInteroperable(f"ERC-7930 version {int.from_bytes(raw[:2], 'big')} is not 1")
    if raw[2:4] != EIP155:
        raise NotInteroperable(f"chain type 0x{raw[2:4].hex()} is not eip155 (0x0000)")
    reference_length = raw[4]
    if not 1 <= reference_length <= 32 or len(raw) < 6 + reference_length:
        raise NotInteroperable("the chain reference's length does not fit the address")
    reference = raw[5 : 5 + reference_length]
    address_length = raw[5 + reference_length]
    address = raw[6 + reference_length :]
    if address_length != EVM_ADDRESS_BYTES or len(address) != EVM_ADDRESS_BYTES:
        raise NotInteroperable("an eip155 address is 20 bytes")
    return InteropAddress(
        chain_id=int.from_bytes(reference, "big"),
        address=Address(to_checksum_address(address)),
    )
