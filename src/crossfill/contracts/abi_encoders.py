"""eth_abi's encoder registry with three of its encoders specialised for the values this
service passes (`ENCODERS`); tuples, arrays, dynamic types and their offsets stay eth_abi's.

eth_abi validates a value at every level it passes through (a tuple checks each of its
elements, then encodes each, which checks it again) and converts every address through
eth_utils' normalisation and mixed-case checksum test. Calldata is built on every quote (the
deposit, the approval, a swap's Router calls, the fill's), and these checks were a third of a
same-chain swap quote's CPU. The encoders here check each value once, by the same rules, and
write the same bytes (`tests/unit/test_abi.py` compares them with `eth_abi.encode`); a value
that does not fit still raises eth_abi's EncodingError.
"""

from __future__ import annotations

import re
from typing import Any

from eth_abi.encoding import AddressEncoder, TupleEncoder, UnsignedIntegerEncoder
from eth_abi.exceptions import ValueOutOfBounds
from eth_abi.registry import BaseEquals, is_base_tuple, registry
from eth_typing import Address

_HEX_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}", re.ASCII)
_ADDRESS_PADDING = bytes(12)


def _address_bytes(value: str | bytes) -> Address:
    return Address(value if isinstance(value, bytes) else bytes.fromhex(value[2:]))


class HexAddressEncoder(AddressEncoder):
    """An address given as 0x-hex (any case) or its 20 bytes, read as it is: addresses reach
    calldata already parsed (`domain.identifiers`) or configured."""

    @classmethod
    def validate_value(cls, value: Any) -> None:
        if isinstance(value, bytes):
            if len(value) != 20:
                cls.invalidate_value(value)
        elif not isinstance(value, str) or _HEX_ADDRESS.fullmatch(value) is None:
            cls.invalidate_value(value)

    encode_fn = staticmethod(_address_bytes)  # type: ignore[assignment]

    def encode(self, value: Any) -> bytes:
        self.validate_value(value)
        return _ADDRESS_PADDING + _address_bytes(value)


class UintEncoder(UnsignedIntegerEncoder):
    """uintN: an int (not a bool) in [0, 2**N), as one 32-byte big-endian word."""

    def validate_value(self, value: Any) -> None:
        if not isinstance(value, int) or isinstance(value, bool):
            self.invalidate_value(value)
        if value < 0 or value >> self.value_bit_size:
            self.invalidate_value(
                value,
                exc=ValueOutOfBounds,
                msg=f"Cannot be encoded in {self.value_bit_size} bits",
            )

    def encode(self, value: Any) -> bytes:
        self.validate_value(value)
        encoded: bytes = value.to_bytes(32, "big")
        return encoded


class ShapeCheckedTupleEncoder(TupleEncoder):
    """A tuple whose shape (a list or tuple of the right length) is checked before it is
    encoded; each element is checked once, by its own encoder, as it is encoded."""

    def validate_value(self, value: Any) -> None:
        if not isinstance(value, list | tuple):
            self.invalidate_value(value, msg="must be list-like object such as array or tuple")
        expected = len(self.encoders or ())
        if len(value) != expected:
            self.invalidate_value(
                value,
                exc=ValueOutOfBounds,
                msg=f"value has {len(value)} items when {expected} were expected",
            )


ENCODERS = registry.copy()  # type: ignore[no-untyped-call]
for _label, _lookup, _encoder in (
    ("address", BaseEquals("address"), HexAddressEncoder),  # type: ignore[no-untyped-call]
    ("uint", BaseEquals("uint"), UintEncoder),  # type: ignore[no-untyped-call]
    ("is_base_tuple", is_base_tuple, ShapeCheckedTupleEncoder),
):
    ENCODERS.unregister_encoder(_label)
    ENCODERS.register_encoder(_lookup, _encoder, label=_label)
