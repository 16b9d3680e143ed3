"""The EVM chain port: what the workers and use cases may ask of a chain.

`kinds.evm.client.EvmClient` serves it over JSON-RPC; tests serve it from memory
(`tests/unit/fake_chain.py`) with scripted faults. Every call returns its answer or raises a
typed outcome (`crossfill.errors`): `Reverted` (the contract refused, with its decoded
reason: the only outcome that may refuse or refund an order), `ChainUnreachable`,
`RateLimited`, `NodeBehind`, or another `ChainError` (the node answered something unusable).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

from crossfill.errors import ChainError
from crossfill.kinds.evm.client import (
    BlockHead,
    CallOutcome,
    ChainPoll,
    LogFilter,
    Read,
    ScannedRange,
    TracedRange,
    TransactionFacts,
    ValueTransfer,
)
from crossfill.types import ChainId, TraceApi


class EvmPort(Protocol):
    chain_id: ChainId

    async def head(self) -> BlockHead: ...

    async def block_at(self, number: int) -> BlockHead | None: ...

    async def poll(self, holder: str, tokens: Sequence[str], reads: list[Read]) -> ChainPoll:
        """Head, priority fee, `holder`'s balances and the market reads, in one answer."""

    async def scan(self, filters: list[LogFilter], start: int, end: int) -> ScannedRange:
        """Logs of each filter over [start, end] and block `end`, in one node's answer."""

    async def value_transfers(self, number: int, to: frozenset[str]) -> list[ValueTransfer]:
        """Block `number`'s transactions paying ether straight to one of `to`."""

    async def internal_transfers(
        self, start: int, end: int, to: frozenset[str], traces: TraceApi
    ) -> TracedRange:
        """Ether contracts' internal calls and self-destructs paid to one of `to` in blocks
        `start`..`end`, that took effect, read from the node's `traces`; and the transactions
        the node answered for but could not trace."""

    async def receipt(self, tx_hash: str) -> Any | None: ...

    async def fee_paid(self, tx_hash: str) -> int | None:
        """What the mined transaction's sender paid for it, in wei; None if not mined."""

    async def fees_paid(self, tx_hashes: Sequence[str]) -> list[int | None]:
        """`fee_paid` of each transaction, in their order, read together."""

    async def transaction_input(self, tx_hash: str) -> tuple[bytes, str]: ...

    async def sent_transaction(self, tx_hash: str) -> TransactionFacts | None:
        """The transaction's sender, `to`, value and calldata; None if the node has not
        seen it."""

    async def transaction_sender(self, tx_hash: str) -> tuple[str, int] | None:
        """The transaction's sender and nonce, mined or pending; None if the node has not
        seen it."""

    async def fill_tx_hashes(self, filler: str, order_id: str, *, not_before: int) -> list[str]:
        """Transactions that filled the order, searched back to `not_before` (unix seconds)."""

    async def estimate_gas(self, tx: dict[str, Any]) -> int:
        """Simulates the call: `Reverted` when the contract refuses it."""

    async def estimate_call(self, sender: str, to: str, data: str, value: int) -> int:
        """`estimate_gas` of a plain call from `sender` (`data` in hex)."""

    async def call(self, to: str, data: bytes) -> bytes:
        """What a read-only call of `data` to `to` returns at the latest block."""

    async def code(self, address: str) -> bytes:
        """The account's code now (an EIP-7702 delegation designator for a delegated one)."""

    async def simulate(self, call: dict[str, Any], *, block: int | None = None) -> CallOutcome:
        """What the call does on the state after `block` (latest when None): its logs, or
        its revert data; the call's sender is not checked."""

    async def send_raw(self, raw_transaction: bytes) -> str: ...

    async def send_raw_batch(self, raw_transactions: Sequence[bytes]) -> list[str | ChainError]:
        """Broadcast signed transactions together (one node's answer where it takes a batch):
        each one's hash, or its refusal (`send_raw`'s kinds); ChainUnreachable for all."""

    async def pending_nonce(self, address: str) -> int: ...

    async def mined_nonce(self, address: str) -> int: ...

    async def balance_and_allowance(
        self, currency: str, holder: str, spender: str
    ) -> tuple[int, int | None]: ...

    async def native_balances(self, holders: Sequence[str], block: int) -> list[int]:
        """Each holder's gas-currency balance at `block`, in order (one read)."""

    async def check_identity(self) -> None: ...

    async def check_traces(self, traces: TraceApi) -> None:
        """Raise unless the endpoint serves the `traces` `internal_transfers` reads."""

    async def close(self) -> None: ...


class HeadStream(Protocol):
    """Heads pushed by a node as they come (`kinds.evm.head_subscription.WebSocketHeads`)."""

    def new_heads(self) -> AsyncIterator[BlockHead]:
        """Every new head from now on; raises ChainUnreachable when the stream is lost."""
        ...
