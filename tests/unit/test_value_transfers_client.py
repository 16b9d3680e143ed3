"""The chain client's reading of ether paid straight to watched addresses: a transaction that
reverted pays nothing, though its block lists it with its value; a receipt that cannot be of
the block read proves nothing and the read fails, to be tried again."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from crossfill.errors import ChainError, NodeBehind
from tests.unit.rpc_node import client_of

ADDRESS, OTHER, PAYER = "0x" + "c3" * 20, "0x" + "d4" * 20, "0x" + "a1" * 20
BLOCK_HASH = "0x" + "0b" * 32
REVERTED, PAID, ELSEWHERE = ("0x" + digit * 64 for digit in "123")


def _tx(tx_hash: str, to: str, value: int) -> dict[str, Any]:
    return {"hash": tx_hash, "from": PAYER, "to": to, "value": hex(value)}


@dataclass
class _Node:
    """Block 7: a transfer to ADDRESS that reverted, one that succeeded, one to OTHER."""

    transactions: list[dict[str, Any]] = field(
        default_factory=lambda: [
            _tx(REVERTED, ADDRESS, 4 * 10**15),
            _tx(PAID, ADDRESS, 10**16),
            _tx(ELSEWHERE, OTHER, 10**16),
        ]
    )
    status: dict[str, str] = field(default_factory=lambda: {REVERTED: "0x0", PAID: "0x1"})
    receipt_block_hash: str = BLOCK_HASH
    asked: list[tuple[str, Any]] = field(default_factory=list)
    batches: bool = True
    transport_failures: dict[str, Exception] = field(default_factory=dict)

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        method, params = request["method"], request["params"]
        self.asked.append((method, params[0]))
        result: Any = None
        if method == "eth_getBlockByNumber" and params[0] == hex(7):
            result = {"number": hex(7), "hash": BLOCK_HASH, "timestamp": "0x1",
                      "transactions": self.transactions}  # fmt: skip
        elif method == "eth_getTransactionReceipt" and params[0] in self.status:
            result = {"transactionHash": params[0], "blockHash": self.receipt_block_hash,
                      "status": self.status[params[0]]}  # fmt: skip
        return {"jsonrpc": "2.0", "id": request["id"], "result": result}


async def test_a_transfer_that_reverted_pays_nothing() -> None:
    node = _Node()
    found = await client_of(node).value_transfers(7, frozenset({ADDRESS}))
    assert [(paid.tx_hash, paid.value, paid.block.hash) for paid in found] == [
        (PAID, 10**16, BLOCK_HASH)
    ]
    # Only the receipts of transactions paying a watched address are asked.
    receipts = [tx for method, tx in node.asked if method == "eth_getTransactionReceipt"]
    assert receipts == [REVERTED, PAID]


async def test_a_block_paying_no_watched_address_asks_no_receipt() -> None:
    node = _Node()
    assert await client_of(node).value_transfers(7, frozenset({"0x" + "e5" * 20})) == []
    assert [method for method, _ in node.asked] == ["eth_getBlockByNumber"]


async def test_a_node_without_the_receipt_is_behind() -> None:
    node = _Node(status={REVERTED: "0x0"})
    with pytest.raises(NodeBehind):
        await client_of(node).value_transfers(7, frozenset({ADDRESS}))


async def test_a_receipt_of_another_block_is_an_error_not_a_verdict() -> None:
    node = _Node(receipt_block_hash="0x" + "0c" * 32)  # reorged between the two reads
    with pytest.raises(ChainError, match="receipt"):
        await client_of(node).value_transfers(7, frozenset({ADDRESS}))
