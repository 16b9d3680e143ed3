"""Ether that contracts paid within a transaction, read from its call traces (pure).

A smart wallet (a Safe, an ERC-4337 account) or an exchange's batch contract pays ether by an
internal call, and a contract can hand its whole balance over as it self-destructs: no
transaction is `to` the address paid, so reading blocks' transactions does not see it. A
node's traces list every call with its value, in one of two shapes:

- parity-style (`trace_filter`, `trace_transaction`, `trace_block`: Erigon, Nethermind, Reth,
  anvil): a flat list, each trace placed by its `traceAddress`; a self-destruct is a trace of
  type `suicide` paying its `balance` to its `refundAddress`;
- geth's `callTracer` (`debug_traceBlockByHash`: geth and its forks, most L2 nodes, anvil): one
  tree of frames per transaction; a self-destruct is a `SELFDESTRUCT` frame.

A payment took effect when its frame and every frame above it completed: a frame that
reverted (its trace has an `error`) undoes every call it made, whatever their own traces say.

Each payment is numbered by its place among the transaction's value-carrying calls, the
transaction's own call included, in execution order, then its self-destructs after them: the
same number at every reading, whatever addresses are watched, and in either shape.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class InternalPayment:
    ordinal: int  # its place among the transaction's value-carrying calls
    sender: str  # the contract that paid (lower case)
    to: str  # lower case
    value: int


@dataclass(frozen=True)
class _Move:
    """Ether a frame of the transaction moved."""

    self_destruct: bool
    own_call: bool  # the transaction's own call: a plain transfer, seen with its block
    undone: bool  # in or under a frame that reverted
    sender: str
    to: str
    value: int


def internal_payments(traces: list[dict[str, Any]]) -> list[InternalPayment]:
    """The ether paid by the internal calls of one transaction that took effect, from its
    parity-style traces (`trace_transaction`'s answer)."""
    return _effective(list(_parity_moves(traces)))


def call_frame_payments(frame: dict[str, Any]) -> list[InternalPayment]:
    """The same, from the transaction's geth `callTracer` frame."""
    return _effective(list(_frame_moves(frame)))


def _effective(moves: list[_Move]) -> list[InternalPayment]:
    numbered = [move for move in moves if not move.self_destruct] + [
        move for move in moves if move.self_destruct
    ]
    return [
        InternalPayment(ordinal, move.sender.lower(), move.to.lower(), move.value)
        for ordinal, move in enumerate(numbered)
        if not move.own_call and not move.undone
    ]


def _parity_moves(traces: list[dict[str, Any]]) -> Iterator[_Move]:
    undone = _undone(traces)
    for trace in traces:
        action = trace.get("action") or {}
        kind = trace.get("type")
        if kind == "call" and action.get("callType") == "call":
            sender, to, value = action["from"], action["to"], action.get("value")
        elif kind == "suicide":
            sender, to, value = action["address"], action["refundAddress"], action.get("balance")
        else:
            continue  # creations, delegate and static calls move no ether to another account
        amount = _amount(value)
        if amount == 0:
            continue
        path = _path(trace)
        yield _Move(kind == "suicide", not path, undone[path], str(sender), str(to), amount)


def _undone(traces: list[dict[str, Any]]) -> dict[tuple[int, ...], bool]:
    """Each trace's place, and whether it or a frame above it reverted, whatever order the
    traces come in. Each place is judged once, from the nearest one judged above it: the
    traces of one transaction of nested calls go a thousand deep."""
    reverted = {_path(trace) for trace in traces if trace.get("error")}
    undone: dict[tuple[int, ...], bool] = {}
    for trace in traces:
        path = _path(trace)
        unjudged = []
        while path not in undone:
            unjudged.append(path)
            if not path:
                break
            path = path[:-1]
        above = undone.get(path, False)
        for place in reversed(unjudged):
            above = above or place in reverted
            undone[place] = above
    return undone


def _frame_moves(top: dict[str, Any]) -> Iterator[_Move]:
    """The frames in execution order (depth first), walked without recursion: one cheap
    transaction can nest calls 1,024 deep."""
    pending: list[tuple[dict[str, Any], bool]] = [(top, False)]  # a frame, and whether undone
    while pending:
        frame, undone = pending.pop()
        undone = undone or bool(frame.get("error"))
        kind = frame.get("type")
        amount = _amount(frame.get("value"))
        if kind in ("CALL", "SELFDESTRUCT") and amount > 0:
            yield _Move(
                kind == "SELFDESTRUCT",
                frame is top,
                undone,
                str(frame["from"]),
                str(frame["to"]),
                amount,
            )
        pending.extend((inner, undone) for inner in reversed(frame.get("calls") or ()))


def _amount(value: Any) -> int:
    """A value as traces give it: a hex string, a JSON number, or nothing."""
    if value is None:
        return 0
    return value if isinstance(value, int) else int(str(value), 16)


def _path(trace: dict[str, Any]) -> tuple[int, ...]:
    return tuple(int(step) for step in trace.get("traceAddress") or ())
