"""An EVM chain in memory, serving the chain port (`crossfill.kinds.evm.port.EvmPort`) to the
workers' unit tests, with faults scripted per method: the next calls of a method raise the
outcomes a test puts in its queue. It also pushes heads (`kinds.evm.port.HeadStream`): a test
pushes each new head, or drops the open subscription.

Underneath the scripting it keeps a node's rules, checked against anvil by
`tests/conformance`: blocks that link to their parents and none above the head; balances,
token balances and allowances; signed transactions decoded, refused as a node refuses them
(`AlreadyKnown`, `NonceTooLow`, `CannotPayGas`, an underpriced replacement), pending until a
block is mined (`mine_block`), then executed: ether moved and the fee paid, ERC-20 `transfer`
and `approve` on the tokens it holds (with their `Transfer` logs), and every call to a
refusing contract (`refuse_calls`) reverted, in a failed receipt, in `estimate_gas` and in
`simulate`. A test may also put a receipt in the head block by hand (`mine`)."""

from __future__ import annotations

import asyncio
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import rlp  # type: ignore[import-untyped]
from eth_account import Account
from eth_account.typed_transactions.typed_transaction import TypedTransaction
from eth_utils.crypto import keccak
from hexbytes import HexBytes

from crossfill.contracts.abi import ERC20, function
from crossfill.contracts.reverts import decode_revert
from crossfill.errors import (
    AlreadyKnown,
    CannotPayGas,
    ChainError,
    ChainUnreachable,
    NodeBehind,
    NonceTooLow,
    Reverted,
    SendRefused,
)
from crossfill.kinds.evm import receipt_outcomes
from crossfill.kinds.evm.client import (
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
from crossfill.kinds.evm.depository_logs import address_topic, erc20_transfer_event
from crossfill.types import NATIVE_EVM_ADDRESS, ChainId, TraceApi

# What a plain transfer of ether costs in gas; a call costs the chain's `gas`.
TRANSFER_GAS = 21_000
# A replacement must offer this much more (in percent) of both its fee cap and its tip.
REPLACEMENT_BUMP_PERCENT = 10


@dataclass(frozen=True)
class SentTransaction:
    """A signed transaction as the node read it."""

    tx_hash: str
    sender: str
    nonce: int
    to: str  # "" for a creation
    value: int
    data: bytes
    gas: int
    max_fee_per_gas: int
    max_priority_fee_per_gas: int

    @property
    def facts(self) -> TransactionFacts:
        return TransactionFacts(self.sender, self.to, self.value, self.data)

    def gas_price(self, base_fee: int) -> int:
        return min(self.max_fee_per_gas, base_fee + self.max_priority_fee_per_gas)


def _decoded(raw: bytes) -> SentTransaction:
    """The transaction in `raw`; SendRefused, as a node answers, when it is none."""
    try:
        sender = Account.recover_transaction(raw)
        if raw[0] > 0x7F:  # legacy: rlp [nonce, gasPrice, gas, to, value, data, v, r, s]
            nonce, price, gas, to, value, data = rlp.decode(raw)[:6]
            fields: dict[str, Any] = {
                "nonce": _number(nonce), "gas": _number(gas), "to": to, "value": _number(value),
                "data": data, "maxFeePerGas": _number(price),
                "maxPriorityFeePerGas": _number(price),
            }  # fmt: skip
        else:
            fields = TypedTransaction.from_bytes(HexBytes(raw)).as_dict()
            if "gasPrice" in fields:  # an access-list transaction
                fields["maxFeePerGas"] = fields["maxPriorityFeePerGas"] = fields["gasPrice"]
    except Exception as exc:  # eth_account and rlp raise many kinds for bytes of no transaction
        raise SendRefused(f"rlp: failed to decode signed transaction: {exc}") from exc
    return SentTransaction(
        tx_hash="0x" + keccak(raw).hex(),
        sender=sender.lower(),
        nonce=int(fields["nonce"]),
        to=("0x" + bytes(fields["to"]).hex()) if fields["to"] else "",
        value=int(fields["value"]),
        data=bytes(fields["data"]),
        gas=int(fields["gas"]),
        max_fee_per_gas=int(fields["maxFeePerGas"]),
        max_priority_fee_per_gas=int(fields["maxPriorityFeePerGas"]),
    )


def _number(encoded: bytes) -> int:
    return int.from_bytes(encoded, "big")


def _topic_matches(wanted: str | list[str] | None, topic: str | None) -> bool:
    if wanted is None:
        return True
    if topic is None:
        return False
    choices = [wanted] if isinstance(wanted, str) else wanted
    return topic in (choice.lower() for choice in choices)


def _matches(log_filter: LogFilter, entry: dict[str, Any]) -> bool:
    """Whether `eth_getLogs` with this filter finds the log."""
    if str(entry["address"]).lower() not in {a.lower() for a in log_filter.addresses}:
        return False
    topics = [HexBytes(topic).to_0x_hex() for topic in entry["topics"]]
    if len(log_filter.topics) > len(topics):
        return False
    return all(
        _topic_matches(wanted, topics[index]) for index, wanted in enumerate(log_filter.topics)
    )


@dataclass
class FakeChain:
    chain_id: ChainId
    head_block: BlockHead = field(
        default_factory=lambda: BlockHead(
            100, 1_700_000_000, "0x" + "11" * 32, 1, parent_hash=_block_hash(99)
        )
    )
    gas: int = 100_000
    # method name -> outcomes its next calls raise, in order
    faults: dict[str, deque[BaseException]] = field(default_factory=lambda: defaultdict(deque))
    # each broadcast the node took or had already (whatever the caller heard), by hash
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
    # (contract, calldata) -> what a read-only call returns
    call_answers: dict[tuple[str, bytes], bytes] = field(default_factory=dict)
    # block number -> the logs in it, as eth_getLogs answers them (what `scan` filters)
    logs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
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
    # wei held, by lower-case address
    balances: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    # (token, holder) -> units held, and (token, holder, spender) -> units allowed, lower case
    token_balances: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))
    allowances: dict[tuple[str, str, str], int] = field(default_factory=lambda: defaultdict(int))
    # the ERC-20 tokens it runs `transfer` and `approve` of (`give_tokens`)
    tokens: set[str] = field(default_factory=set)
    # contract -> the revert data every call to it answers
    refusing: dict[str, bytes] = field(default_factory=dict)
    # signed transactions taken and not mined yet, by hash
    pending: dict[str, SentTransaction] = field(default_factory=dict)
    # every head this chain had (`push_head`), by number
    blocks: dict[int, BlockHead] = field(default_factory=dict)

    def fail(self, method: str, *outcomes: BaseException) -> None:
        self.faults[method].extend(outcomes)

    def _called(self, method: str) -> None:
        self.calls.append(method)
        queued = self.faults.get(method)
        if queued:
            raise queued.popleft()

    # -- arranging state, as a test's chain would have it ------------------------------------

    def fund(self, address: str, wei: int) -> None:
        self.balances[address.lower()] = wei

    def give_tokens(self, token: str, holder: str, units: int) -> None:
        """`holder` holds `units` of the ERC-20 `token` (which gets a contract's code)."""
        self.tokens.add(token.lower())
        self.codes.setdefault(token.lower(), b"\x60\x00")
        self.token_balances[token.lower(), holder.lower()] = units

    def refuse_calls(self, contract: str, revert_data: bytes) -> None:
        """Every call to `contract` reverts with `revert_data`."""
        self.codes.setdefault(contract.lower(), b"\x60\x00")
        self.refusing[contract.lower()] = revert_data

    def mine(self, tx_hash: str, *, status: int = 1, logs: Sequence[dict[str, Any]] = ()) -> None:
        """Put the transaction's receipt in the head block, as the test scripts it."""
        self.receipts[tx_hash] = {
            "transactionHash": tx_hash,
            "status": status,
            "blockNumber": self.head_block.number,
            "blockHash": self.head_block.hash,
            "gasUsed": 50_000,
            "effectiveGasPrice": 2,
            "logs": list(logs),
        }
        self._drop_passed()

    def mine_block(self) -> BlockHead:
        """Mine a block on top of the head with every pending transaction that may run (each
        sender's in nonce order, none past a gap), and push it to the subscriber."""
        head = self.push_head()
        ready = sorted(self.pending.values(), key=lambda tx: (tx.sender, tx.nonce))
        for tx in ready:
            if tx.nonce == self._mined_nonce(tx.sender):
                self._execute(tx, head)
        return head

    def push_head(self) -> BlockHead:
        """Mine an empty block on top of the head and push it to the subscriber."""
        parent = self.head_block
        self.blocks[parent.number] = parent
        self.head_block = BlockHead(
            parent.number + 1,
            parent.timestamp + 1,
            _block_hash(parent.number + 1),
            1,
            parent_hash=parent.hash,
        )
        self.blocks[self.head_block.number] = self.head_block
        self._pushed.put_nowait(self.head_block)
        return self.head_block

    def drop_subscription(self) -> None:
        self._pushed.put_nowait(ChainUnreachable("head subscription lost: socket closed"))

    # -- execution ---------------------------------------------------------------------------

    def _mined_nonce(self, sender: str) -> int:
        """The sender's transactions in the chain: past each one with a receipt, and any
        count a test set (`nonces`). A receipt a reorg took away gives its nonce back."""
        mined = [
            nonce + 1
            for tx_hash, (who, nonce) in self.transactions.items()
            if who == sender and tx_hash in self.receipts
        ]
        return max([self.nonces.get(sender, 0), *mined])

    def _drop_passed(self) -> None:
        """Transactions waiting whose nonce a mined one took: they can never be mined."""
        for waiting in list(self.pending.values()):
            if waiting.nonce < self._mined_nonce(waiting.sender):
                del self.pending[waiting.tx_hash]

    def _execute(self, tx: SentTransaction, block: BlockHead) -> None:
        gas_used = TRANSFER_GAS if not tx.data else min(tx.gas, self.gas)
        price = tx.gas_price(block.base_fee_per_gas)
        self.balances[tx.sender] -= gas_used * price
        logs = self._run(tx, block) if tx.to not in self.refusing else None
        self.receipts[tx.tx_hash] = {
            "transactionHash": tx.tx_hash,
            "status": 0 if logs is None else 1,
            "blockNumber": block.number,
            "blockHash": block.hash,
            "gasUsed": gas_used,
            "effectiveGasPrice": price,
            "logs": logs or [],
        }
        self.logs.setdefault(block.number, []).extend(logs or [])
        self._drop_passed()

    def _run(self, tx: SentTransaction, block: BlockHead) -> list[dict[str, Any]] | None:
        """The call's logs, its value moved; None when it reverts (nothing moved)."""
        moved: list[tuple[str, str, int]] = []
        selector, arguments = tx.data[:4], tx.data[4:]
        if tx.to in self.tokens and selector == _TRANSFER:
            to, units = function(ERC20, "transfer").decode_arguments(arguments)
            if self.token_balances[tx.to, tx.sender] < units:
                return None
            self.token_balances[tx.to, tx.sender] -= units
            self.token_balances[tx.to, str(to).lower()] += units
            moved.append((tx.sender, str(to).lower(), units))
        elif tx.to in self.tokens and selector == _APPROVE:
            spender, units = function(ERC20, "approve").decode_arguments(arguments)
            self.allowances[tx.to, tx.sender, str(spender).lower()] = units
        self.balances[tx.sender] -= tx.value
        self.balances[tx.to] += tx.value
        if tx.value and tx.to:
            paid = ValueTransfer(tx.tx_hash, tx.sender, tx.to, tx.value, block)
            self.ether_transfers.setdefault(block.number, []).append(paid)
        first = len(self.logs.get(block.number, []))
        return [
            _transfer_log(tx, block, first + index, sender, to, units)
            for index, (sender, to, units) in enumerate(moved)
        ]

    # -- the port ----------------------------------------------------------------------------

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
        return self._block(number)

    def _block(self, number: int) -> BlockHead:
        if number == self.head_block.number:
            return self.head_block
        if number > self.head_block.number:
            raise ChainError(f"chain {self.chain_id}: block {hex(number)} not found")
        if number in self.replaced_blocks:
            return self.replaced_blocks[number]
        if number in self.blocks:
            return self.blocks[number]
        return BlockHead(
            number, self.head_block.timestamp, _block_hash(number), 1, _block_hash(number - 1)
        )

    async def poll(self, holder: str, tokens: Sequence[str], reads: list[Read]) -> ChainPoll:
        self._called("poll")
        held = [self.token_balances[token.lower(), holder.lower()] for token in tokens]
        return ChainPoll(
            self.head_block, 1, self.balances[holder.lower()], held, [None] * len(reads)
        )

    async def scan(self, filters: list[LogFilter], start: int, end: int) -> ScannedRange:
        self._called("scan")
        if end > self.head_block.number:
            raise NodeBehind(
                f"chain {self.chain_id}: the node answering has not reached block {end}",
                block_number=end,
            )
        found = [entry for number in range(start, end + 1) for entry in self.logs.get(number, [])]
        logs = [[entry for entry in found if _matches(each, entry)] for each in filters]
        return ScannedRange(logs, self._block(end))

    async def value_transfers(self, number: int, to: frozenset[str]) -> list[ValueTransfer]:
        self._called("value_transfers")
        if number > self.head_block.number:
            raise NodeBehind(f"chain {self.chain_id}: block {number}", block_number=number)
        return [t for t in self.ether_transfers.get(number, []) if t.to in to]

    async def internal_transfers(
        self, start: int, end: int, to: frozenset[str], traces: TraceApi
    ) -> TracedRange:
        self._called("internal_transfers")
        self.traces_read.append(traces)
        if end > self.head_block.number:
            raise NodeBehind(f"chain {self.chain_id}: block {end}", block_number=end)
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

    async def fees_paid(self, tx_hashes: Sequence[str]) -> list[int | None]:
        self._called("fees_paid")
        return [
            None if (receipt := self.receipts.get(tx_hash)) is None
            else receipt_outcomes.fee_paid(receipt)
            for tx_hash in tx_hashes
        ]  # fmt: skip

    async def transaction_input(self, tx_hash: str) -> tuple[bytes, str]:
        self._called("transaction_input")
        facts = self.sent_facts.get(tx_hash)
        return (b"", "") if facts is None else (facts.data, facts.to)

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
        refused = self.refusing.get(str(tx.get("to", "")).lower())
        if refused is not None:
            raise Reverted(
                f"chain {self.chain_id}: eth_estimateGas reverted",
                data=refused,
                reason=decode_revert(refused),
            )
        return self.gas

    async def estimate_call(self, sender: str, to: str, data: str, value: int) -> int:
        # The same node call as estimate_gas: its faults and count are that method's.
        return await self.estimate_gas({"from": sender, "to": to, "data": data, "value": value})

    async def call(self, to: str, data: bytes) -> bytes:
        """A scripted answer, else what a token's `balanceOf` answers; nothing from an
        account without code."""
        self._called("call")
        scripted = self.call_answers.get((to.lower(), data))
        if scripted is not None:
            return scripted
        balance_of = function(ERC20, "balanceOf")
        if data[:4] == balance_of.selector and to.lower() in self.codes:
            (holder,) = balance_of.decode_arguments(data[4:])
            return (self.token_balances[to.lower(), holder.lower()]).to_bytes(32, "big")
        if to.lower() not in self.codes:
            return b""
        raise NotImplementedError(f"fake chain: no answer scripted for a call to {to}")

    async def code(self, address: str) -> bytes:
        self._called("code")
        return self.codes.get(address.lower(), b"")

    async def simulate(self, call: dict[str, Any], *, block: int | None = None) -> CallOutcome:
        self._called("simulate")
        self.simulated_at.append(block)
        refused = self.refusing.get(str(call.get("to", "")).lower())
        if refused is not None:
            return CallOutcome(False, refused, [])
        return self.simulated

    async def send_raw(self, raw_transaction: bytes) -> str:
        tx_hash = "0x" + keccak(raw_transaction).hex()
        queued = self.faults.get("send_raw_after_taking")
        if queued:  # the node took it; the answer is lost on the way back
            self._take(_decoded(raw_transaction))
            raise queued.popleft()
        self._called("send_raw")
        self._take(_decoded(raw_transaction))
        return tx_hash

    async def send_raw_batch(self, raw_transactions: Sequence[bytes]) -> list[str | ChainError]:
        """Each as `send_raw` takes it (its faults included), answered together."""
        self.calls.append("send_raw_batch")
        answers: list[str | ChainError] = []
        for raw in raw_transactions:
            try:
                answers.append(await self.send_raw(raw))
            except ChainError as refused:
                answers.append(refused)
        return answers

    def _take(self, tx: SentTransaction) -> None:
        """Into the pool, or refused as a node refuses it."""
        if tx.tx_hash in self.pending:
            self.sent.append(tx.tx_hash)
            raise AlreadyKnown("transaction already imported")
        if tx.nonce < self._mined_nonce(tx.sender):
            raise NonceTooLow("nonce too low")
        if self.balances[tx.sender] < tx.value + tx.gas * tx.max_fee_per_gas:
            raise CannotPayGas("Insufficient funds for gas * price + value")
        replaced = next(
            (t for t in self.pending.values() if (t.sender, t.nonce) == (tx.sender, tx.nonce)),
            None,
        )
        if replaced is not None:
            if not _pays_more(replaced, tx):
                raise SendRefused("replacement transaction underpriced")
            del self.pending[replaced.tx_hash]
            self.transactions.pop(replaced.tx_hash, None)
            self.sent_facts.pop(replaced.tx_hash, None)
        self.pending[tx.tx_hash] = tx
        self.transactions[tx.tx_hash] = (tx.sender, tx.nonce)
        self.sent_facts[tx.tx_hash] = tx.facts
        self.sent.append(tx.tx_hash)

    async def pending_nonce(self, address: str) -> int:
        self._called("pending_nonce")
        sender = address.lower()
        nonce = self._mined_nonce(sender)
        waiting = {tx.nonce for tx in self.pending.values() if tx.sender == sender}
        while nonce in waiting:
            nonce += 1
        return nonce

    async def mined_nonce(self, address: str) -> int:
        self._called("mined_nonce")
        return self._mined_nonce(address.lower())

    async def balance_and_allowance(
        self, currency: str, holder: str, spender: str
    ) -> tuple[int, int | None]:
        self._called("balance_and_allowance")
        if currency.lower() == NATIVE_EVM_ADDRESS:
            return self.balances[holder.lower()], None
        token, owner = currency.lower(), holder.lower()
        return self.token_balances[token, owner], self.allowances[token, owner, spender.lower()]

    async def native_balances(self, holders: Sequence[str], block: int) -> list[int]:
        """Balances as they are now, whatever `block` (the fake keeps no history)."""
        self._called("native_balances")
        return [self.balances[holder.lower()] for holder in holders]

    async def check_identity(self) -> None:
        self._called("check_identity")

    async def check_traces(self, traces: TraceApi) -> None:
        self._called("check_traces")

    async def close(self) -> None:
        return None


_TRANSFER = function(ERC20, "transfer").selector
_APPROVE = function(ERC20, "approve").selector


def _pays_more(replaced: SentTransaction, replacement: SentTransaction) -> bool:
    """Whether `replacement` bumps both the fee cap and the tip enough to take the nonce."""
    return all(
        new * 100 >= old * (100 + REPLACEMENT_BUMP_PERCENT)
        for old, new in (
            (replaced.max_fee_per_gas, replacement.max_fee_per_gas),
            (replaced.max_priority_fee_per_gas, replacement.max_priority_fee_per_gas),
        )
    )


def _transfer_log(
    tx: SentTransaction, block: BlockHead, log_index: int, sender: str, to: str, units: int
) -> dict[str, Any]:
    """An ERC-20 `Transfer` log as eth_getLogs answers it (quantities as ints)."""
    return {
        "address": tx.to,
        "topics": [erc20_transfer_event().topic, address_topic(sender), address_topic(to)],
        "data": "0x" + units.to_bytes(32, "big").hex(),
        "blockNumber": block.number,
        "blockHash": block.hash,
        "transactionHash": tx.tx_hash,
        "transactionIndex": 0,
        "logIndex": log_index,
        "removed": False,
    }


def _block_hash(number: int) -> str:
    return "0x" + f"{number:064x}"
