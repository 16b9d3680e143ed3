"""The chain client over a scripted node: each JSON-RPC call (alone or in a batch) is answered
by the node's `answer`, with no HTTP; a node may refuse batches, or make a method's calls
fail in the transport (no answer in time, a dropped connection)."""

from __future__ import annotations

import json
from typing import Any, Protocol

from crossfill.chains.transport import JsonRpcProvider
from crossfill.kinds.evm.client import EvmClient
from crossfill.metrics import Metrics
from crossfill.types import ChainId

REFUSAL = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no batches"}}


class ScriptedNode(Protocol):
    batches: bool  # False: every batch is refused whole
    transport_failures: dict[str, Exception]  # method -> what the transport meets calling it

    def answer(self, request: dict[str, Any]) -> dict[str, Any]: ...


class _Provider(JsonRpcProvider):
    def __init__(self, node: ScriptedNode) -> None:
        super().__init__("http://node.invalid", timeout_seconds=1)
        self.node = node

    async def _post(self, body: bytes) -> bytes:
        request = json.loads(body)
        for call in request if isinstance(request, list) else [request]:
            failure = self.node.transport_failures.get(call["method"])
            if failure is not None:
                raise failure
        if isinstance(request, list):
            if not self.node.batches:
                return json.dumps(REFUSAL).encode()
            return json.dumps([self.node.answer(each) for each in request]).encode()
        return json.dumps(self.node.answer(request)).encode()


def client_of(node: ScriptedNode) -> EvmClient:
    """A chain client whose every call `node` answers."""
    client = EvmClient(ChainId(1), "http://node.invalid", timeout_seconds=1, metrics=Metrics())
    client.web3.provider = _Provider(node)
    return client
