"""The log scan on an endpoint that refuses JSON-RPC batches: block by block, each block's logs
asked by its hash, the headers linked into one chain; batches tried again after a while."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from crossfill.chains.batching import Batching
from crossfill.chains.evm import BLOCKS_AT_ONCE, EvmClient, LogFilter
from crossfill.chains.transport import JsonRpcProvider
from crossfill.errors import ChainError, NodeBehind
from crossfill.metrics import Metrics
from crossfill.types import ChainId

DEPOSITS = LogFilter(("0x" + "11" * 20,), ("0x" + "aa" * 32,))
TRANSFERS = LogFilter(("0x" + "22" * 20,), ("0x" + "bb" * 32,))
REFUSAL = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no batches"}}


def _hash(number: int, fork: str = "") -> str:
    return "0x" + f"{fork}{number:x}".rjust(64, "0")


@dataclass
class _Chain:
    """A node's chain: blocks by number, and the logs of each filter's address by block."""

    blocks: int
    # Headers from this block on come from another fork, which left this one a block before.
    forked_at: int | None = None
    unknown_hashes: set[str] = field(default_factory=set)  # logs asked by these: refused
    batches: int = 0

    def block(self, number: int) -> dict[str, Any] | None:
        if number >= self.blocks:
            return None
        fork = "f" if self.forked_at is not None and number >= self.forked_at else ""
        return {
            "number": hex(number),
            "timestamp": hex(1_000 + number),
            "hash": _hash(number, fork),
            "parentHash": _hash(number - 1, fork) if number else "0x" + "00" * 32,
        }

    def logs(self, query: dict[str, Any]) -> list[dict[str, Any]]:
        number = int(query["blockHash"][-8:], 16)
        address = query["address"][0]
        # A deposit in every third block, a transfer in every fifth.
        every = 3 if address == DEPOSITS.addresses[0] else 5
        if number % every:
            return []
        return [
            {
                "address": address,
                "blockHash": query["blockHash"],
                "blockNumber": hex(number),
                "logIndex": "0x0",
                "transactionHash": _hash(number),
                "topics": list(query["topics"]),
                "data": "0x",
            }
        ]

    def answer(self, request: Any) -> Any:
        if isinstance(request, list):
            self.batches += 1
            return REFUSAL
        method, params = request["method"], request["params"]
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        if method == "eth_getBlockByNumber":
            answer["result"] = self.block(int(params[0], 16))
        elif method == "eth_getLogs" and params[0]["blockHash"] in self.unknown_hashes:
            answer["error"] = {"code": -32000, "message": "unknown block"}
        elif method == "eth_getLogs":
            answer["result"] = self.logs(params[0])
        else:
            answer["error"] = {"code": -32601, "message": f"{method} not served here"}
        return answer


class _Provider(JsonRpcProvider):
    def __init__(self, chain: _Chain) -> None:
        super().__init__("http://node.invalid", timeout_seconds=1)
        self.chain = chain

    async def _post(self, body: bytes) -> bytes:
        return json.dumps(self.chain.answer(json.loads(body))).encode()


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _client(chain: _Chain, clock: _Clock | None = None) -> EvmClient:
    client = EvmClient(ChainId(1), "http://node.invalid", timeout_seconds=1, metrics=Metrics())
    client.web3.provider = _Provider(chain)
    if clock is not None:
        client.batching = Batching(clock=clock)
    return client


async def test_a_range_is_read_block_by_block_in_order() -> None:
    chain = _Chain(blocks=100)
    client = _client(chain)
    end = 2 * BLOCKS_AT_ONCE + 5  # more than two windows of concurrent reads
    scanned = await client.scan([DEPOSITS, TRANSFERS], 3, end)
    deposits, transfers = scanned.logs
    assert [entry["blockNumber"] for entry in deposits] == list(range(3, end + 1, 3))
    assert [entry["blockNumber"] for entry in transfers] == list(range(5, end + 1, 5))
    assert scanned.end_block.number == end and scanned.end_block.hash == _hash(end)
    assert chain.batches == 1  # refused once, then single calls only


@pytest.mark.parametrize("forked_at", [10, BLOCKS_AT_ONCE])  # in a window, or between two
async def test_headers_from_two_forks_are_no_scan(forked_at: int) -> None:
    """A reorganisation between two header reads: the range is one chain or nothing."""
    client = _client(_Chain(blocks=100, forked_at=forked_at))
    with pytest.raises(ChainError, match="different forks"):
        await client.scan([DEPOSITS], 0, BLOCKS_AT_ONCE + 5)


async def test_logs_refused_for_a_block_the_node_does_not_know_are_node_behind() -> None:
    """The logs' node has not got the block the header came from: nothing may advance."""
    chain = _Chain(blocks=100, unknown_hashes={_hash(12)})
    with pytest.raises(NodeBehind) as behind:
        await _client(chain).scan([DEPOSITS], 10, 14)
    assert behind.value.block_number == 12


async def test_a_block_the_node_has_not_reached_is_node_behind() -> None:
    with pytest.raises(NodeBehind) as behind:
        await _client(_Chain(blocks=10)).scan([DEPOSITS], 5, 12)
    assert behind.value.block_number == 10


async def test_a_batch_is_tried_again_after_a_while() -> None:
    chain, clock = _Chain(blocks=100), _Clock()
    client = _client(chain, clock)
    await client.scan([DEPOSITS], 0, 5)
    await client.scan([DEPOSITS], 6, 9)
    assert chain.batches == 1
    clock.now += client.batching.retry_after_seconds
    scanned = await client.scan([DEPOSITS], 10, 12)
    assert chain.batches == 2
    assert [entry["blockNumber"] for entry in scanned.logs[0]] == [12]
