"""A wallet's side of ERC-7683 on Crossfill's settlers: a gasless order and the user's EIP-712
signature of it, made by eth-account (an implementation independent of the contracts')."""

from __future__ import annotations

from typing import Any

from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_utils.crypto import keccak

GASLESS_ORDER_FIELDS = [
    {"name": "originSettler", "type": "address"},
    {"name": "user", "type": "address"},
    {"name": "nonce", "type": "uint256"},
    {"name": "originChainId", "type": "uint256"},
    {"name": "openDeadline", "type": "uint32"},
    {"name": "fillDeadline", "type": "uint32"},
    {"name": "orderDataType", "type": "bytes32"},
    {"name": "orderData", "type": "bytes"},
]


def gasless_order_tuple(order: dict[str, Any]) -> tuple[Any, ...]:
    """The order as `openFor` takes it (the struct's fields in order)."""
    return tuple(order[field["name"]] for field in GASLESS_ORDER_FIELDS)


def sign_gasless_order(user: LocalAccount, order: dict[str, Any]) -> bytes:
    """The user's EIP-712 signature of `order` under its origin settler's domain."""
    domain = {
        "name": "CrossfillOriginSettler",
        "version": "1",
        "chainId": order["originChainId"],
        "verifyingContract": order["originSettler"],
    }
    types = {"GaslessCrossChainOrder": GASLESS_ORDER_FIELDS}
    return bytes(Account.sign_typed_data(user.key, domain, types, order).signature)


def erc7683_request_id(order_id: str) -> str:
    """The request an ERC-7683 order is, as docs/erc7683.md derives it."""
    return "0x" + keccak(b"crossfill-erc7683" + bytes.fromhex(order_id[2:])).hex()
