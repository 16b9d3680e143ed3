"""EIP-712 types and domains in the JSON form that eth-account and wallets take, each struct
written as its type string (`Name(type field,...)`, as `encodeType` spells it and the
contracts' typehashes read), so a type is declared once, in the notation it is checked in."""

from __future__ import annotations

import re
from typing import Any, Final

EIP712_DOMAIN: Final = (
    "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"
)
ZERO_ADDRESS: Final = "0x0000000000000000000000000000000000000000"
_STRUCT = re.compile(r"(\w[\w:]*)\((.*)\)", re.ASCII)


def eip712_types(*structs: str) -> dict[str, list[dict[str, str]]]:
    """`{Name: [{"name": field, "type": type}, ...]}` for each struct `Name(type field,...)`."""
    types: dict[str, list[dict[str, str]]] = {}
    for struct in structs:
        declared = _STRUCT.fullmatch(struct)
        if declared is None:
            raise ValueError(f"not an EIP-712 struct type: {struct!r}")
        name, fields = declared.groups()
        types[name] = [_field(field) for field in fields.split(",")] if fields else []
    return types


def _field(declared: str) -> dict[str, str]:
    kind, name = declared.split(" ")
    return {"name": name, "type": kind}


def eip712_domain(
    name: str, version: str, chain_id: int, verifying_contract: str = ZERO_ADDRESS
) -> dict[str, Any]:
    """A domain of the full `EIP712Domain` type: its name and version, on `chain_id`, at
    `verifying_contract` (the zero address for a statement no contract checks)."""
    return {
        "name": name,
        "version": version,
        "chainId": chain_id,
        "verifyingContract": verifying_contract,
    }
