"""An EVM chain in memory, serving the chain port (`crossfill.chains.port.EvmPort`) to the
workers' unit tests, with faults scripted per method: the next calls of a method raise the
outcomes a test puts in its queue. It also pushes heads (`chains.port.HeadStream`): a test
pushes each new head, or drops the open subscription."""

from __future__ import annotations

import asyncio
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from eth_utils.crypto import keccak

from crossfill.chains import receipt_outcomes
from crossfill.chains.evm import (
    BlockHead,
    CallOutcome,
    ChainPoll,
    InternalTransfer,
    LogFilter,
    Read,
    ScannedRange,
    TracedRange,
    TransactionFacts,
    ValueTransfer,
)
from crossfill.errors import ChainUnreachable
from crossfill.types import ChainId, TraceApi


@dataclass
class FakeChain:
    chain_id: ChainId
    head_block: BlockHead = field(
        default_factory=lambda: BlockHead(100, 1_700_000_000, "0x" + "11" * 32, 1)
    )
    gas: int = 100_000
    # method name -> outcomes its next calls raise, in order
    faults: dict[str, deque[BaseException]] = field(default_factory=lambda: defaultdict(deque))
    # what reached the chain (the node took it, whatever the caller heard)
    sent: list[str] = field(default_factory=list)
    receipts: dict[str, dict[str, Any]] = field(default_factory=dict)
    filled: dict[str, str] = field(default_factory=dict)  # order id -> fill tx hash
    nonces: dict[str, int] = field(default_factory=dict)  # mined transactions per sender
    calls: list[str] = field(default_factory=list)
    # tx hash -> (sender, nonce): transactions the node has seen (pending or mined)
    transactions: dict[str, tuple[str, int]] = field(default_factory=dict)
    # tx hash -> the transaction as sent (`sent_transaction`)
    sent_facts: dict[str, TransactionFacts] = field(default_factory=dict)
    # what the open head subscription delivers next: a head, or the failure that ends it
    _pushed: asyncio.Queue[BlockHead | BaseException] = field(default_factory=asyncio.Queue)
    subscriptions: int = 0
    # what a simulated call does (`simulate`), and the blocks it was simulated after
    simulated: CallOutcome = field(default_factory=lambda: CallOutcome(True, b"", []))
    simulated_at: list[int | None] = field(default_factory=list)
    codes: dict[str, bytes] = field(default_factory=dict)  # account -> its code
    # block number -> the Depository logs in it (what the scan's first filter finds)
    deposit_logs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    # block number -> the block a reorg put there (below the head; see `block_at`)
    replaced_blocks: dict[int, BlockHead] = field(default_factory=dict)
    # block number -> ether paid straight to addresses in it
    ether_transfers: dict[int, list[ValueTransfer]] = field(default_factory=dict)
    # ether contracts' internal calls paid (`internal_transfers`)
    internal_payments: list[InternalTransfer] = field(default_factory=list)
    # the kind of traces each `internal_transfers` read asked for
    traces_read: list[TraceApi] = field(default_factory=list)
    # transactions (hash -> block) whose traces the node cannot give
    untraced: dict[str, int] = field(default_factory=dict)

    def fail(self, method: str, *outcomes: BaseException) -> None:
        self.faults[method].extend(outcomes)

    def _called(self, method: str) -> None:
        self.calls.append(method)
        queued = self.faults.get(method)
        if queued:
            raise queued.popleft()

    def mine(self, tx_hash: str, *, status: int = 1, logs: Sequence[dict[str, Any]] = ()) -> None:
        self.receipts[tx_hash] = {
            "transactionHash": tx_hash,
            "status": status,
            "blockNumber": self.head_block.number,
            "blockHash": self.head_block.hash,
            "gasUsed": 50_000,
            "effectiveGasPrice": 2,
            "logs": list(logs),
        }

    def push_head(self) -> BlockHead:
        """Mine an empty block on top of the head and push it to the subscriber."""
        parent = self.head_block
        self.head_block = BlockHead(
            parent.number + 1,
            parent.timestamp + 1,
            _block_hash(parent.number + 1),
            1,
            parent_hash=parent.hash,
        )
        self._pushed.put_nowait(self.head_block)
        return self.head_block

    def drop_subscription(self) -> None:
        self._pushed.put_nowait(ChainUnreachable("head subscription lost: socket closed"))

    async def new_heads(self) -> AsyncIterator[BlockHead]:
        self._called("new_heads")
        self.subscriptions += 1
        while True:
            pushed = await self._pushed.get()
            if isinstance(pushed, BaseException):
                raise pushed
            yield pushed

    async def head(self) -> BlockHead:
        self._called("head")
        return self.head_block

    async def block_at(self, number: int) -> BlockHead | None:
        self._called("block_at")
        if number == self.head_block.number:
            return self.head_block
        if number in self.replaced_blocks:
            return self.replaced_blocks[number]
        return BlockHead(
            number, self.head_block.timestamp, _block_hash(number), 1, _block_hash(number - 1)
        )

    async def poll(self, holder: str, tokens: Sequence[str], reads: list[Read]) -> ChainPoll:
        self._called("poll")
        return ChainPoll(self.head_block, 1, 10**21, [0] * len(tokens), [None] * len(reads))

    async def scan(self, filters: list[LogFilter], start: int, end: int) -> ScannedRange:
        self._called("scan")
        found = [
            log for number in range(start, end + 1) for log in self.deposit_logs.get(number, [])
        ]
        logs: list[list[dict[str, Any]]] = [found, *([] for _ in filters[1:])]
        return ScannedRange(logs, await self.block_at(end) or self.head_block)

    async def value_transfers(self, number: int, to: frozenset[str]) -> list[ValueTransfer]:
        self._called("value_transfers")
        return [t for t in self.ether_transfers.get(number, []) if t.to in to]

    async def internal_transfers(
        self, start: int, end: int, to: frozenset[str], traces: TraceApi
    ) -> TracedRange:
        self._called("internal_transfers")
        self.traces_read.append(traces)
        paid = [p for p in self.internal_payments if start <= p.block_number <= end and p.to in to]
        untraced = [tx for tx, block in self.untraced.items() if start <= block <= end]
        return TracedRange(paid, untraced)

    async def receipt(self, tx_hash: str) -> Any | None:
        self._called("receipt")
        return self.receipts.get(tx_hash)

    async def fee_paid(self, tx_hash: str) -> int | None:
        self._called("fee_paid")
        receipt = self.receipts.get(tx_hash)
        return None if receipt is None else receipt_outcomes.fee_paid(receipt)

    async def transaction_input(self, tx_hash: str) -> tuple[bytes, str]:
        self._called("transaction_input")
        return b"", ""

    async def sent_transaction(self, tx_hash: str) -> TransactionFacts | None:
        self._called("sent_transaction")
        return self.sent_facts.get(tx_hash)

    async def transaction_sender(self, tx_hash: str) -> tuple[str, int] | None:
        self._called("transaction_sender")
        return self.transactions.get(tx_hash)

    async def fill_tx_hashes(self, filler: str, order_id: str, *, not_before: int) -> list[str]:
        self._called("fill_tx_hashes")
        found = self.filled.get(order_id)
        return [found] if found else []

    async def estimate_gas(self, tx: dict[str, Any]) -> int:
        self._called("estimate_gas")
        return self.gas

    async def estimate_call(self, sender: str, to: str, data: str, value: int) -> int:
        # The same node call as estimate_gas: its faults and count are that method's.
        return await self.estimate_gas({"from": sender, "to": to, "data": data, "value": value})

    async def code(self, address: str) -> bytes:
        self._called("code")
        return self.codes.get(address.lower(), b"")

    async def simulate(self, call: dict[str, Any], *, block: int | None = None) -> CallOutcome:
        self._called("simulate")
        self.simulated_at.append(block)
        return self.simulated

    async def send_raw(self, raw_transaction: bytes) -> str:
        tx_hash = "0x" + keccak(raw_transaction).hex()
        queued = self.faults.get("send_raw_after_taking")
        if queued:  # the node took it; the answer is lost on the way back
            self.sent.append(tx_hash)
            raise queued.popleft()
        self._called("send_raw")
        self.sent.append(tx_hash)
        return tx_hash

    async def pending_nonce(self, address: str) -> int:
        self._called("pending_nonce")
        return self.nonces.get(address.lower(), 0)

    async def mined_nonce(self, address: str) -> int:
        self._called("mined_nonce")
        return self.nonces.get(address.lower(), 0)

    async def balance_and_allowance(
        self, currency: str, holder: str, spender: str
    ) -> tuple[int, int | None]:
        self._called("balance_and_allowance")
        return 10**21, None

    async def check_identity(self) -> None:
        self._called("check_identity")

    async def check_traces(self, traces: TraceApi) -> None:
        self._called("check_traces")

    async def close(self) -> None:
        return None


def _block_hash(number: int) -> str:
    return "0x" + f"{number:064x}"
