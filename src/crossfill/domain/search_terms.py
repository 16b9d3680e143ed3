"""What one search box's text is, by its shape (pure): a 32-byte hex value (a request id, an
order id or an EVM transaction hash: only the store tells which), an EVM address, an SVM
address, or an SVM transaction signature. Anything else is refused with what is accepted."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from crossfill.domain.identifiers import (
    InvalidIdentifier,
    is_address,
    is_hash32,
    is_svm_address,
    parse_text,
)

# Base58 of 64 bytes (an SVM transaction signature) takes 86 to 88 characters.
_BASE58_SIGNATURE = re.compile(
    "[123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz]{86,88}", re.ASCII
)
ACCEPTED = "a request id, an order id, a transaction hash or an address"


class Shape(StrEnum):
    HASH32 = "hash32"
    ADDRESS = "address"
    SVM_ADDRESS = "svm address"
    SVM_SIGNATURE = "svm signature"


@dataclass(frozen=True)
class SearchTerm:
    shape: Shape
    value: str  # as stored: hex lower-cased, base58 exactly as given


def recognise(text: str) -> SearchTerm:
    """The term `text` (spaces around it ignored) is; InvalidIdentifier if it is none."""
    term = text.strip()
    parse_text(term, "search")
    if is_hash32(term):
        return SearchTerm(Shape.HASH32, term.lower())
    if is_address(term):
        return SearchTerm(Shape.ADDRESS, term.lower())
    if is_svm_address(term):
        return SearchTerm(Shape.SVM_ADDRESS, term)
    if _BASE58_SIGNATURE.fullmatch(term):
        return SearchTerm(Shape.SVM_SIGNATURE, term)
    shown = term if len(term) <= 80 else term[:80] + "…"
    raise InvalidIdentifier(f"{shown!r} is not {ACCEPTED}")
