"""Who signed an EIP-712 message, by the rules the contracts keep: 65 bytes, `r` and `s`
within the curve order, `s` in its lower half. Every ECDSA signature has a high-`s` twin that
recovers the same signer; refusing it gives one signer's statement one signature (EIP-2)."""

from __future__ import annotations

import re
from collections.abc import Callable

from eth_account import Account
from eth_account.messages import SignableMessage
from eth_keys.exceptions import BadSignature
from eth_utils.exceptions import ValidationError

from crossfill.domain.set_code import SECP256K1_N
from crossfill.types import Address

_SIGNATURE = re.compile(r"0x[0-9a-fA-F]{130}", re.ASCII)


class UnrecoverableSignature(ValueError):
    """The signature is malformed, high-`s`, or recovers no signer; the message says which."""


def is_hex_signature(value: str) -> bool:
    return _SIGNATURE.fullmatch(value) is not None


def signer_of(signable: SignableMessage, signature: str) -> Address:
    """The address that signed `signable` (UnrecoverableSignature if none did by the rules)."""
    if not is_hex_signature(signature):
        raise UnrecoverableSignature("signature must be 0x-prefixed hex of 65 bytes")
    raw = bytes.fromhex(signature[2:])
    r, s = int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:64], "big")
    if not 0 < r < SECP256K1_N or not 0 < s <= SECP256K1_N // 2:
        raise UnrecoverableSignature(
            "signature must have r within the curve order and s in its lower half"
        )
    try:
        return Address(Account.recover_message(signable, signature=signature))
    except (BadSignature, ValidationError, ValueError):
        raise UnrecoverableSignature("signature cannot be recovered") from None


def check_signer(
    signable: SignableMessage,
    signature: str,
    wallet: str,
    *,
    refused: Callable[[str], Exception],
    what: str,
) -> None:
    """Raise `refused` (saying why) unless `wallet` signed `signable`, `what` the statement."""
    try:
        signer = signer_of(signable, signature)
    except UnrecoverableSignature as exc:
        raise refused(str(exc)) from None
    if signer.lower() != wallet.lower():
        raise refused(f"{what} is not signed by {wallet}")
