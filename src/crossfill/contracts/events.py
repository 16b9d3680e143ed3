"""Event logs → their arguments, decoded with the compiled ABIs (no hand-typed signatures)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from eth_abi.abi import decode
from eth_abi.exceptions import DecodingError

from crossfill.contracts.abi import AbiEvent
from crossfill.contracts.abi import event as abi_event


@dataclass(frozen=True)
class EventLog:
    """One decoded event: the contract that emitted it and its arguments by name."""

    address: str  # lowercase
    log_index: int
    args: Mapping[str, Any]


def _bytes(value: Any) -> bytes:
    return bytes.fromhex(value[2:]) if isinstance(value, str) else bytes(value)


def _decoded(log: Any, abi: AbiEvent) -> EventLog | None:
    topics = [_bytes(topic) for topic in log["topics"]]
    if not topics or topics[0] != _bytes(abi.topic) or len(topics) != 1 + len(abi.indexed):
        return None
    try:
        args = {
            name: decode([kind], topic)[0]
            for (name, kind), topic in zip(abi.indexed, topics[1:], strict=True)
        }
        values = decode([kind for _, kind in abi.data], _bytes(log["data"]))
    except DecodingError:
        return None
    args.update(zip((name for name, _ in abi.data), values, strict=True))
    return EventLog(str(log["address"]).lower(), int(log["logIndex"]), args)


def decode_events(logs: Iterable[Any], contract: str, event: str) -> list[EventLog]:
    """The logs that are `contract`'s `event`, decoded, in log order; others are skipped."""
    abi = abi_event(contract, event)
    return [decoded for log in logs if (decoded := _decoded(log, abi)) is not None]
