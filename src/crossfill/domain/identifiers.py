"""The one strict parser per kind of identifier a client may send (pure; no I/O).

Every route, the websocket, the CLI and the quote checks parse identifiers here, so one rule
holds everywhere: ASCII only (Python's `isdigit` and `int` accept superscript and full-width
digits), whole-string matches (a `$` anchor lets a trailing newline through), exact lengths,
and integer ranges the database can store (BIGINT: below 2**63). A value that fails is an
`InvalidIdentifier` naming the field; callers turn it into their own 400.
"""

from __future__ import annotations

import re
from typing import Final, TypeGuard

from crossfill.types import Address, ChainId, SvmAddress, TxHash

INT64_MAX: Final = 2**63 - 1
UINT256_LIMIT: Final = 2**256
# Unix seconds up to 3000-01-01T00:00:00Z: far enough, and a datetime can still add to it
# (the last second a datetime holds is in 9999; one more overflows).
MAX_UNIX_SECONDS: Final = 32_503_680_000
MAX_TEXT_FIELD: Final = 200

_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}", re.ASCII)
_HASH32 = re.compile(r"0x[0-9a-fA-F]{64}", re.ASCII)
_HEX_BYTES = re.compile(r"0x(?:[0-9a-fA-F]{2})*", re.ASCII)
# Bitcoin's base58 alphabet (no 0, O, I, l); 32 bytes take 32 to 44 characters.
_BASE58_ALPHABET: Final = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_BASE58 = re.compile(f"[{_BASE58_ALPHABET}]{{32,44}}", re.ASCII)


class InvalidIdentifier(ValueError):
    """A client-sent identifier is malformed or out of range; the message says which."""


def is_decimal(text: str) -> bool:
    """Only ASCII digits, at least one."""
    return _DIGITS.fullmatch(text) is not None


def parse_uint(value: str | int, field: str, *, maximum: int = INT64_MAX) -> int:
    """A non-negative integer from ASCII digits (or a JSON integer) up to `maximum`."""
    if isinstance(value, bool):
        raise InvalidIdentifier(f"{field} must be a non-negative integer")
    if isinstance(value, str):
        # The length check first: int() of thousands of digits is quadratic work.
        if len(value) > len(str(maximum)) or not is_decimal(value):
            raise InvalidIdentifier(f"{field} must be a non-negative integer up to {maximum}")
        value = int(value)
    if not isinstance(value, int) or not 0 <= value <= maximum:
        raise InvalidIdentifier(f"{field} must be a non-negative integer up to {maximum}")
    return value


def parse_chain_id(value: str | int, field: str = "chainId") -> ChainId:
    """A chain id: a positive integer below 2**63, as ASCII digits or a JSON integer."""
    chain_id = parse_uint(value, field)
    if chain_id == 0:
        raise InvalidIdentifier(f"{field} must be a positive integer")
    return ChainId(chain_id)


def parse_row_id(value: str | int, field: str) -> int:
    """A database row id: 1..2**63-1."""
    row_id = parse_uint(value, field)
    if row_id == 0:
        raise InvalidIdentifier(f"{field} must be a positive integer")
    return row_id


def parse_unix_seconds(value: str | int, field: str) -> int:
    """Unix seconds up to the year 3000."""
    return parse_uint(value, field, maximum=MAX_UNIX_SECONDS)


def is_address(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and _ADDRESS.fullmatch(value) is not None


def parse_address(value: object, field: str) -> Address:
    """A 0x-prefixed 20-byte hex address, lower-cased."""
    if not is_address(value):
        raise InvalidIdentifier(f"{field} must be a 0x-prefixed 20-byte hex address")
    return Address(value.lower())


def _base58_decode(text: str) -> bytes:
    number = 0
    for character in text:
        number = number * 58 + _BASE58_ALPHABET.index(character)
    body = number.to_bytes((number.bit_length() + 7) // 8, "big") if number else b""
    # Each leading "1" is a leading zero byte.
    return b"\x00" * (len(text) - len(text.lstrip("1"))) + body


def is_svm_address(value: object) -> TypeGuard[str]:
    """Base58 of exactly 32 bytes (an SVM account, mint or program address)."""
    if not isinstance(value, str) or _BASE58.fullmatch(value) is None:
        return False
    return len(_base58_decode(value)) == 32


def parse_svm_address(value: object, field: str) -> SvmAddress:
    """A base58 SVM address of 32 bytes, exactly as given: base58 is case-sensitive, so it is
    never lower-cased (an EVM address is refused: it is hex, not base58 of 32 bytes)."""
    if not is_svm_address(value):
        raise InvalidIdentifier(f"{field} must be a base58 SVM address of 32 bytes")
    return SvmAddress(value)


def is_hash32(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and _HASH32.fullmatch(value) is not None


def parse_tx_hash(value: object, field: str = "txHash") -> TxHash:
    """A 0x-prefixed 32-byte hex hash (transaction hash, request id, order id), lower-cased."""
    if not is_hash32(value):
        raise InvalidIdentifier(f"{field} must be a 0x-prefixed 32-byte hex hash")
    return TxHash(value.lower())


def parse_hex_bytes(value: str, field: str) -> bytes:
    """0x-prefixed hex of whole bytes (calldata)."""
    if _HEX_BYTES.fullmatch(value) is None:
        raise InvalidIdentifier(f"{field} must be 0x-prefixed hex of whole bytes")
    return bytes.fromhex(value[2:])


def parse_text(value: str, field: str, *, max_length: int = MAX_TEXT_FIELD) -> str:
    """Free text a client labels things with (referrer, names): printable, bounded.

    `isprintable` refuses control characters (a newline forges log lines), lone surrogates
    (which no database encoding can store) and unassigned code points.
    """
    if len(value) > max_length or not value.isprintable():
        raise InvalidIdentifier(
            f"{field} must be printable text of at most {max_length} characters"
        )
    return value
