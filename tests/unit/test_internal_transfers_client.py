"""The chain client's reading of contracts' ether payments from a node's traces: in one
batch with the range's last block, or block by block where batches are refused; an answer
that cannot be about the block asked is NodeBehind, never an empty reading."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from crossfill.chains.evm import EvmClient, InternalTransfer
from crossfill.chains.transport import JsonRpcProvider
from crossfill.errors import ChainError, NodeBehind
from crossfill.metrics import Metrics
from crossfill.types import ChainId

WALLET, ADDRESS, OTHER = "0x" + "a1" * 20, "0x" + "c3" * 20, "0x" + "d4" * 20
PAYING_TX = "0x" + "77" * 32
REFUSAL = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no batches"}}


def _hash(number: int) -> str:
    return "0x" + f"{number:x}".rjust(64, "0")


def _call(path: list[int], to: str, value: int) -> dict[str, Any]:
    return {
        "type": "call", "traceAddress": path, "transactionHash": PAYING_TX,
        "blockNumber": 5, "blockHash": _hash(5),
        "action": {"callType": "call", "from": WALLET, "to": to, "value": hex(value)},
    }  # fmt: skip


_PAYING = [_call([], WALLET, 10), _call([0], ADDRESS, 7), _call([1], OTHER, 3)]


@dataclass
class _Node:
    """Blocks 0..head; block 5 holds one transaction: a wallet paying ADDRESS 7 and OTHER 3
    from within."""

    head: int = 9
    batches: bool = True
    traces_served: bool = True
    # block 5's traces, as the node answers them
    block_traces: list[dict[str, Any]] = field(default_factory=lambda: list(_PAYING))
    # trace_block's answer for a block the node has not got (anvil's: an empty list)
    unknown_block_traces: list[Any] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        method, params = request["method"], request["params"]
        self.asked.append(method)
        result: Any
        if method == "eth_getBlockByNumber":
            number = self.head if params[0] == "latest" else int(params[0], 16)
            result = None
            if number <= self.head:
                result = {"number": hex(number), "hash": _hash(number), "timestamp": hex(number),
                          "transactions": [PAYING_TX] if number == 5 else []}  # fmt: skip
        elif method.startswith("trace_") and not self.traces_served:
            missing = {"code": -32601, "message": f"the method {method} does not exist"}
            return {"jsonrpc": "2.0", "id": request["id"], "error": missing}
        elif method == "trace_filter":
            wanted = set(params[0]["toAddress"])
            found = [t for t in self.block_traces if t["action"]["to"] in wanted]
            result = found if int(params[0]["toBlock"], 16) >= 5 else []
        elif method == "trace_transaction":
            result = self.block_traces
        elif method == "trace_block":
            number = int(params[0], 16)
            if number > self.head:
                result = self.unknown_block_traces
            else:
                result = self.block_traces if number == 5 else []
        else:
            return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601}}
        return {"jsonrpc": "2.0", "id": request["id"], "result": result}


class _Provider(JsonRpcProvider):
    def __init__(self, node: _Node) -> None:
        super().__init__("http://node.invalid", timeout_seconds=1)
        self.node = node

    async def _post(self, body: bytes) -> bytes:
        request = json.loads(body)
        if isinstance(request, list):
            if not self.node.batches:
                return json.dumps(REFUSAL).encode()
            return json.dumps([self.node.answer(each) for each in request]).encode()
        return json.dumps(self.node.answer(request)).encode()


def _client(node: _Node) -> EvmClient:
    client = EvmClient(ChainId(1), "http://node.invalid", timeout_seconds=1, metrics=Metrics())
    client.web3.provider = _Provider(node)
    return client


PAID = InternalTransfer(PAYING_TX, WALLET, ADDRESS, 7, 5, _hash(5), ordinal=1)


@pytest.mark.parametrize("batches", [True, False])
async def test_a_payment_from_within_is_found_by_either_path(batches: bool) -> None:
    node = _Node(batches=batches)
    found = await _client(node).internal_transfers(3, 8, frozenset({ADDRESS}))
    assert found == [PAID]
    if batches:
        assert "trace_block" not in node.asked
    else:
        assert node.asked.count("trace_block") == 1  # only the block with a transaction


@pytest.mark.parametrize("batches", [True, False])
async def test_a_node_without_the_blocks_is_behind_not_empty(batches: bool) -> None:
    node = _Node(head=4, batches=batches)
    with pytest.raises(NodeBehind):
        await _client(node).internal_transfers(3, 8, frozenset({ADDRESS}))


async def test_block_by_block_a_trace_answer_of_another_block_is_behind() -> None:
    """The header and the traces may come from different nodes: traces that are not that
    block's (none for a block with a transaction, or another hash) prove nothing."""
    for answered in ([], [{**trace, "blockHash": _hash(99)} for trace in _PAYING]):
        node = _Node(batches=False, block_traces=answered)
        with pytest.raises(NodeBehind):
            await _client(node).internal_transfers(5, 5, frozenset({ADDRESS}))


async def test_an_endpoint_without_traces_fails_the_readiness_check() -> None:
    """What /readyz asks of a chain configured to read traces."""
    await _client(_Node()).check_traces()
    with pytest.raises(ChainError, match="trace_filter does not exist"):
        await _client(_Node(traces_served=False)).check_traces()
