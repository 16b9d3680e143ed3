"""The chain client's reading of contracts' ether payments from a node's traces: in one
batch with the range's last block, or block by block where batches are refused; an answer
that cannot be about the block asked is NodeBehind, never an empty reading."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest

from crossfill.errors import ChainError, ChainUnreachable, NodeBehind
from crossfill.kinds.evm.client import InternalTransfer, TracedRange
from crossfill.types import TraceApi
from tests.unit.rpc_node import client_of

WALLET, ADDRESS, OTHER = "0x" + "a1" * 20, "0x" + "c3" * 20, "0x" + "d4" * 20
PAYING_TX = "0x" + "77" * 32
PARITY, GETH = TraceApi.PARITY, TraceApi.GETH
ZERO = "0x" + "00" * 20


def _hash(number: int) -> str:
    return "0x" + f"{number:x}".rjust(64, "0")


def _call(path: list[int], to: str, value: int) -> dict[str, Any]:
    return {
        "type": "call", "traceAddress": path, "transactionHash": PAYING_TX,
        "blockNumber": 5, "blockHash": _hash(5),
        "action": {"callType": "call", "from": WALLET, "to": to, "value": hex(value)},
    }  # fmt: skip


_PAYING = [_call([], WALLET, 10), _call([0], ADDRESS, 7), _call([1], OTHER, 3)]
# The same transaction as geth's callTracer draws it.
_PAYING_FRAME = {
    "type": "CALL", "from": WALLET, "to": WALLET, "value": hex(10),
    "calls": [
        {"type": "CALL", "from": WALLET, "to": ADDRESS, "value": hex(7)},
        {"type": "CALL", "from": WALLET, "to": OTHER, "value": hex(3)},
    ],
}  # fmt: skip


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
    # block 5's call frames, as debug_traceBlockByHash answers them
    block_frames: list[Any] = field(
        default_factory=lambda: [{"txHash": PAYING_TX, "result": _PAYING_FRAME}]
    )
    # methods the node cannot answer in time here (a transaction of a hundred thousand calls)
    too_big: frozenset[str] = frozenset()
    # False: the node does not answer its head either (it is down, not the traces too big)
    head_answers: bool = True
    # False: a node behind the one that gave the block: it does not know its transaction
    knows_transaction: bool = True
    # method -> what the transport meets calling it (no answer in time, a dropped connection)
    transport_failures: dict[str, Exception] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        method, params = request["method"], request["params"]
        self.asked.append(method)
        try:
            result = self._result(method, params)
        except _Refused as refusal:
            return {"jsonrpc": "2.0", "id": request["id"], "error": refusal.error}
        return {"jsonrpc": "2.0", "id": request["id"], "result": result}

    def _refusal(self, method: str, params: list[Any]) -> dict[str, Any] | None:
        """The error the node answers this call with, if any."""
        if method in self.too_big:
            return {"code": -32000, "message": "execution timeout"}
        if method == "eth_getBlockByNumber" and params[0] == "latest" and not self.head_answers:
            return {"code": -32603, "message": "node unavailable"}
        if method.startswith(("trace_", "debug_")) and not self.traces_served:
            return {"code": -32601, "message": f"the method {method} does not exist"}
        return None

    def _result(self, method: str, params: list[Any]) -> Any:
        refusal = self._refusal(method, params)
        if refusal is not None:
            raise _Refused(refusal)
        if method == "eth_getBlockByNumber":
            number = self.head if params[0] == "latest" else int(params[0], 16)
            if number > self.head:
                return None
            return {"number": hex(number), "hash": _hash(number), "timestamp": hex(number),
                    "transactions": [PAYING_TX] if number == 5 else []}  # fmt: skip
        if method.startswith("debug_"):
            return self._geth_result(method, params)
        if method == "eth_getTransactionByHash":
            known = self.knows_transaction and params[0] == PAYING_TX
            return {"hash": PAYING_TX, "from": WALLET, "nonce": "0x0"} if known else None
        if method == "trace_filter":
            wanted = set(params[0]["toAddress"])
            found = [t for t in self.block_traces if t["action"]["to"] in wanted]
            return found if int(params[0]["toBlock"], 16) >= 5 else []
        if method == "trace_transaction":
            return self.block_traces
        if method == "trace_block":
            number = int(params[0], 16)
            if number > self.head:
                return self.unknown_block_traces
            return self.block_traces if number == 5 else []
        raise _Refused({"code": -32601})

    def _geth_result(self, method: str, params: list[Any]) -> Any:
        if method == "debug_traceBlockByHash":
            known = {_hash(number): number for number in range(self.head + 1)}
            if params[0] not in known:  # anvil's answer
                raise _Refused({"code": -32001, "message": "Resource not found"})
            return self.block_frames if known[params[0]] == 5 else []
        if method == "debug_traceTransaction":
            return _PAYING_FRAME if params[0] == PAYING_TX else None
        if method == "debug_traceCall":
            return {"type": "CALL", "from": ZERO, "to": params[0]["to"], "value": "0x0"}
        raise _Refused({"code": -32601})


class _Refused(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        self.error = error


PAID = InternalTransfer(PAYING_TX, WALLET, ADDRESS, 7, 5, _hash(5), ordinal=1)


@pytest.mark.parametrize("batches", [True, False])
async def test_a_payment_from_within_is_found_by_either_path(batches: bool) -> None:
    node = _Node(batches=batches)
    found = await client_of(node).internal_transfers(3, 8, frozenset({ADDRESS}), PARITY)
    assert found == TracedRange([PAID], [])
    if batches:
        assert "trace_block" not in node.asked
    else:
        assert node.asked.count("trace_block") == 1  # only the block with a transaction


@pytest.mark.parametrize("batches", [True, False])
async def test_geths_call_frames_show_the_same_payment(batches: bool) -> None:
    """The same number as parity's traces give it; only the block with a transaction is
    traced, by its hash."""
    node = _Node(batches=batches)
    found = await client_of(node).internal_transfers(3, 8, frozenset({ADDRESS}), GETH)
    assert found == TracedRange([PAID], [])
    assert node.asked.count("debug_traceBlockByHash") == 1
    assert not [method for method in node.asked if method.startswith("trace_")]


@pytest.mark.parametrize("traces", [PARITY, GETH])
@pytest.mark.parametrize("batches", [True, False])
async def test_a_node_without_the_blocks_is_behind_not_empty(
    batches: bool, traces: TraceApi
) -> None:
    node = _Node(head=4, batches=batches)
    with pytest.raises(NodeBehind):
        await client_of(node).internal_transfers(3, 8, frozenset({ADDRESS}), traces)


@pytest.mark.parametrize(
    "frames",
    [
        [],  # no frame for the block's transaction
        [{"txHash": "0x" + "88" * 32, "result": _PAYING_FRAME}],  # another transaction's
    ],
)
async def test_call_frames_that_are_not_the_blocks_transactions_are_an_error(
    frames: list[Any],
) -> None:
    node = _Node(block_frames=frames)
    with pytest.raises(ChainError, match="debug_traceBlockByHash"):
        await client_of(node).internal_transfers(5, 5, frozenset({ADDRESS}), GETH)


@pytest.mark.parametrize(
    "node",
    [
        _Node(block_frames=[{"txHash": PAYING_TX, "error": "execution timeout"}]),
        _Node(too_big=frozenset({"debug_traceBlockByHash"})),
        _Node(batches=False, too_big=frozenset({"trace_block"})),
    ],
    ids=["geth left the transaction out", "geth's block too big", "parity's block too big"],
)
async def test_a_transaction_the_blocks_trace_left_out_is_traced_on_its_own(node: _Node) -> None:
    traces = PARITY if "trace_block" in node.too_big else GETH
    found = await client_of(node).internal_transfers(3, 8, frozenset({ADDRESS}), traces)
    assert found == TracedRange([PAID], [])


@pytest.mark.parametrize(
    ("traces", "too_big"),
    [
        (GETH, {"debug_traceBlockByHash", "debug_traceTransaction"}),
        (PARITY, {"trace_transaction"}),
    ],
)
async def test_a_transaction_the_node_cannot_trace_is_named_not_skipped(
    traces: TraceApi, too_big: set[str]
) -> None:
    """The node answers its head, but not that transaction's traces: the reading says so
    (the sweeper decides); a node that does not answer its head either is down, and the
    read fails."""
    node = _Node(too_big=frozenset(too_big))
    found = await client_of(node).internal_transfers(3, 8, frozenset({ADDRESS}), traces)
    assert found == TracedRange([], [PAYING_TX])
    down = _Node(too_big=frozenset(too_big), head_answers=False)
    with pytest.raises(ChainError):
        await client_of(down).internal_transfers(3, 8, frozenset({ADDRESS}), traces)
    # A node behind the one that gave the block refuses what it does not have: that says
    # nothing of the transaction.
    behind = _Node(too_big=frozenset(too_big), knows_transaction=False)
    with pytest.raises(NodeBehind):
        await client_of(behind).internal_transfers(3, 8, frozenset({ADDRESS}), traces)


async def test_block_by_block_a_trace_answer_of_another_block_is_behind() -> None:
    """The header and the traces may come from different nodes: traces that are not that
    block's (none for a block with a transaction, or another hash) prove nothing."""
    for answered in ([], [{**trace, "blockHash": _hash(99)} for trace in _PAYING]):
        node = _Node(batches=False, block_traces=answered)
        with pytest.raises(NodeBehind):
            await client_of(node).internal_transfers(5, 5, frozenset({ADDRESS}), PARITY)


@pytest.mark.parametrize(
    ("traces", "method"), [(PARITY, "trace_filter"), (GETH, "debug_traceCall")]
)
async def test_an_endpoint_without_traces_fails_the_readiness_check(
    traces: TraceApi, method: str
) -> None:
    """What /readyz asks of a chain configured to read traces."""
    await client_of(_Node()).check_traces(traces)
    with pytest.raises(ChainError, match=f"{method} does not exist"):
        await client_of(_Node(traces_served=False)).check_traces(traces)


@pytest.mark.parametrize("traces", [PARITY, GETH])
async def test_no_answer_in_time_is_a_transaction_not_traced_a_dropped_connection_is_not(
    traces: TraceApi,
) -> None:
    """The endpoint failing (an HTTP error, a connection dropped) is the node's trouble,
    raised like any; no answer in time for one transaction's traces, while the head answers,
    is that transaction's."""
    methods = (
        ["debug_traceBlockByHash", "debug_traceTransaction"]
        if traces is GETH
        else ["trace_transaction"]
    )
    slow = _Node(transport_failures=dict.fromkeys(methods, TimeoutError()))
    found = await client_of(slow).internal_transfers(3, 8, frozenset({ADDRESS}), traces)
    assert found == TracedRange([], [PAYING_TX])
    dropped = aiohttp.ClientConnectionError("connection dropped")
    failing = _Node(transport_failures=dict.fromkeys(methods, dropped))
    with pytest.raises(ChainUnreachable):
        await client_of(failing).internal_transfers(3, 8, frozenset({ADDRESS}), traces)
