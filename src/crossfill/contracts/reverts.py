"""Revert data → what the contract said, decoded with the compiled ABIs (no hand-typed
signatures): our contracts' custom errors, Solidity's `Error(string)` and `Panic(uint256)`."""

from __future__ import annotations

from functools import cache
from typing import Any

from eth_abi.abi import decode
from eth_abi.exceptions import DecodingError
from eth_utils.abi import abi_to_signature, function_signature_to_4byte_selector

from crossfill.contracts.artifacts import load_artifact
from crossfill.errors import RevertReason as RevertReason  # its home; named here as before

# Contracts whose custom errors the solver and the refunder may meet (bubbled up by our
# batching contracts with the callee's own revert data), and the devnet's EIP-7702 delegate
# (a sponsored call's revert).
CONTRACTS = (
    "Filler",
    "Router",
    "Depository",
    "Receiver",
    "ApprovalProxy",
    "Multicaller",
    "BatchDelegate",
)
# Solidity's built-in revert payloads, as ABI error entries.
_BUILT_IN: tuple[dict[str, Any], ...] = (
    {"type": "error", "name": "Error", "inputs": [{"name": "message", "type": "string"}]},
    {"type": "error", "name": "Panic", "inputs": [{"name": "code", "type": "uint256"}]},
)


@cache
def _errors_by_selector() -> dict[bytes, tuple[str, list[str]]]:
    entries: list[dict[str, Any]] = list(_BUILT_IN)
    for name in CONTRACTS:
        entries.extend(item for item in load_artifact(name).abi if item["type"] == "error")
    table: dict[bytes, tuple[str, list[str]]] = {}
    for entry in entries:
        selector = function_signature_to_4byte_selector(abi_to_signature(entry))  # type: ignore[arg-type]
        table[selector] = (entry["name"], [item["type"] for item in entry["inputs"]])
    return table


def decode_revert(data: bytes) -> RevertReason:
    known = _errors_by_selector().get(data[:4])
    if known is None:
        return RevertReason("")
    name, types = known
    try:
        return RevertReason(name, tuple(decode(types, data[4:])))
    except DecodingError:
        return RevertReason("")
