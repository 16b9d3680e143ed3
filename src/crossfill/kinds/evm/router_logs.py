"""Decode the Router's `Multicall(address indexed sender, bytes metadata)` events.

A same-chain request's batch carries its requestId as the metadata, so the event is how the
indexer learns that the user's own transaction has executed it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_abi.exceptions import DecodingError

from crossfill.contracts.abi import AbiEvent, event
from crossfill.kinds.evm.depository_logs import to_hex


def multicall_event() -> AbiEvent:
    return event("Router", "Multicall")


@dataclass(frozen=True)
class RouterBatch:
    tx_hash: str
    block_number: int
    request_id: str


def decode_batch(log: Any) -> RouterBatch | None:
    """The batch of a Router Multicall log tagged with a 32-byte id; None for anything else."""
    topics = [to_hex(topic) for topic in log["topics"]]
    if not topics or topics[0] != multicall_event().topic:
        return None
    try:
        (metadata,) = multicall_event().decode_data(bytes.fromhex(to_hex(log["data"])[2:]))
    except DecodingError:
        return None
    if len(metadata) != 32:
        return None
    return RouterBatch(
        tx_hash=to_hex(log["transactionHash"]),
        block_number=int(log["blockNumber"]),
        request_id="0x" + bytes(metadata).hex(),
    )
