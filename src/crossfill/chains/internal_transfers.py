"""Ether that contracts paid within a transaction, read from its call traces (pure).

A smart wallet (a Safe, an ERC-4337 account) or an exchange's batch contract pays ether by an
internal call: no transaction is `to` the address paid, so reading blocks' transactions does
not see it. A node's parity-style traces (`trace_filter`, `trace_transaction`: Erigon,
Nethermind, Reth, anvil) list every call with its value. A call's payment took effect when
its frame and every frame above it completed: a frame that reverted (its trace has an
`error`) undoes every call it made, whatever their own traces say.

Each payment is numbered by its place among the transaction's value-carrying calls, the
transaction's own call included, in the order the trace lists them: the same number at every
reading, whatever addresses are watched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class InternalPayment:
    ordinal: int  # its place among the transaction's value-carrying calls
    sender: str  # the contract that paid (lower case)
    to: str  # lower case
    value: int


def internal_payments(traces: list[dict[str, Any]]) -> list[InternalPayment]:
    """The ether paid by the internal calls of one transaction (`trace_transaction`'s answer)
    that took effect."""
    reverted = {_path(trace) for trace in traces if trace.get("error")}
    payments, ordinal = [], 0
    for trace in traces:
        action = trace.get("action") or {}
        if trace.get("type") != "call" or action.get("callType") != "call":
            continue  # creations, self-destructs, delegate and static calls move no ether here
        value = int(action.get("value") or "0x0", 16)
        if value == 0:
            continue
        path, position = _path(trace), ordinal
        ordinal += 1
        if not path:
            continue  # the transaction's own call: a plain transfer, seen with its block
        if any(path[:depth] in reverted for depth in range(len(path) + 1)):
            continue
        payments.append(
            InternalPayment(position, str(action["from"]).lower(), str(action["to"]).lower(), value)
        )
    return payments


def _path(trace: dict[str, Any]) -> tuple[int, ...]:
    return tuple(int(step) for step in trace.get("traceAddress") or ())
