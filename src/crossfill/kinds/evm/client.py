"""An EVM chain over JSON-RPC (web3 AsyncWeb3); web3 errors leave here as ChainError."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

import aiohttp
from web3 import AsyncWeb3, Web3
from web3._utils.error_formatters_utils import raise_contract_logic_error_on_revert
from web3.exceptions import ContractLogicError, TransactionNotFound, Web3Exception
from web3.types import RPCEndpoint, RPCResponse

from crossfill.chains.batching import Batching
from crossfill.chains.http_failures import retry_after_seconds
from crossfill.chains.transport import TRANSPORT_ERRORS, JsonRpcProvider, MalformedReply
from crossfill.contracts.abi import ERC20, event, function
from crossfill.contracts.reverts import decode_revert
from crossfill.errors import (
    AlreadyKnown,
    BatchRefused,
    CannotPayGas,
    ChainError,
    ChainUnreachable,
    LogsRefused,
    NodeBehind,
    NonceTooLow,
    RateLimited,
    Reverted,
    SendRefused,
)
from crossfill.kinds.evm.internal_transfers import (
    InternalPayment,
    call_frame_payments,
    internal_payments,
)
from crossfill.kinds.evm.log_ranges import LogRange
from crossfill.metrics import RPC_OK, Metrics
from crossfill.types import ChainId, TraceApi

T = TypeVar("T")
ZERO_ADDRESS = "0x" + "00" * 20
# Blocks whose headers (then logs) are asked at once by a scan on an endpoint that takes no
# batches.
BLOCKS_AT_ONCE = 32
# A scan's single calls in flight at a time, per chain client: providers that take no batches
# are often the ones that limit calls a second.
CALLS_IN_FLIGHT = 8
# A scan's single call answered 429 waits (the endpoint's Retry-After, at most
# RATE_LIMIT_WAIT_SECONDS) and goes again, this many times in all, before it fails as
# RateLimited: one rate-limited call of a scan's hundreds would otherwise fail them all, and
# the scan, asked again, would meet the same limit again.
RATE_LIMITED_ATTEMPTS = 5
RATE_LIMIT_WAIT_SECONDS = 5.0


def _eth_call(to: str, data: bytes) -> tuple[RPCEndpoint, Any]:
    return RPCEndpoint("eth_call"), [{"to": to, "data": "0x" + data.hex()}, "latest"]


@dataclass(frozen=True)
class BlockHead:
    number: int
    timestamp: int
    hash: str
    base_fee_per_gas: int = 0
    # "" when not known (a head built in a test)
    parent_hash: str = ""


def _block_head(block: dict[str, Any]) -> BlockHead:
    """From a JSON-RPC block (hex quantities)."""
    return BlockHead(
        number=int(block["number"], 16),
        timestamp=int(block["timestamp"], 16),
        hash=block["hash"],
        base_fee_per_gas=int(block.get("baseFeePerGas", "0x0"), 16),
        parent_hash=block.get("parentHash", ""),
    )


# (contract address, calldata) of one eth_call
Read = tuple[str, bytes]


def _returned(reply: str | None) -> bytes | None:
    return None if reply is None else bytes.fromhex(reply[2:])


def _revert_data(data: object) -> bytes:
    """web3 hands revert data over as hex (or a node's dict, or nothing)."""
    if isinstance(data, str) and data.startswith("0x"):
        try:
            return bytes.fromhex(data[2:])
        except ValueError:
            return b""
    return b""


def _retry_after(exc: BaseException) -> float | None:
    headers = exc.headers if isinstance(exc, aiohttp.ClientResponseError) else None
    return retry_after_seconds(headers.get("Retry-After") if headers else None)


def shown_endpoint(url: str) -> str:
    """`scheme://host:port` of an RPC URL: what may be logged of it."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname or ''}{port}"


def rpc_outcome(failure: ChainError) -> str:
    """A failed call's outcome label: its typed failure, or `error` for any other."""
    for outcome, kind in _OUTCOMES:
        if isinstance(failure, kind):
            return outcome
    return "error"


# Most specific first: RateLimited is a ChainUnreachable.
_OUTCOMES: tuple[tuple[str, type[ChainError]], ...] = (
    ("reverted", Reverted),
    ("rate_limited", RateLimited),
    ("unreachable", ChainUnreachable),
    ("node_behind", NodeBehind),
)


# Blocks one search for an order's fill asks for at a time, before any narrowing.
FILL_SEARCH_BLOCKS = 2_000


def _errors_of(replies: list[Any]) -> str:
    """The JSON-RPC errors among `replies`, short enough for a log line."""
    errors = [reply.get("error") for reply in replies if "result" not in reply]
    return str(errors)[:300]


def _transport_failure(exc: BaseException) -> str:
    """What went wrong, without the URL that aiohttp's messages repeat."""
    if isinstance(exc, aiohttp.ClientResponseError):
        return f"HTTP {exc.status}"
    return type(exc).__name__


@dataclass(frozen=True)
class LogFilter:
    """`eth_getLogs` of `addresses` whose topics match `topics` (None: any value there)."""

    addresses: tuple[str, ...]
    topics: tuple[str | list[str] | None, ...]


@dataclass(frozen=True)
class TransactionFacts:
    """A transaction as sent: its sender, its `to` ("" for a creation), value and calldata."""

    sender: str
    to: str
    value: int
    data: bytes


@dataclass(frozen=True)
class ValueTransfer:
    """A transaction of a block paying ether straight to an address (`to`, lower case)."""

    tx_hash: str
    sender: str
    to: str
    value: int
    block: BlockHead


@dataclass(frozen=True)
class InternalTransfer:
    """Ether a contract's internal call paid to an address (`to`, lower case), in a
    transaction mined in block `block_number`; `ordinal` numbers it within the transaction
    (`kinds.evm.internal_transfers`)."""

    tx_hash: str
    sender: str
    to: str
    value: int
    block_number: int
    block_hash: str
    ordinal: int


@dataclass
class TracedRange:
    """What a range's traces show: the payments to the addresses asked about, and the
    transactions the node answered for but could not trace (an error for that one call, or
    no answer in time, while it answered its head at once): a transaction of a hundred
    thousand calls has megabytes of traces."""

    paid: list[InternalTransfer]
    untraced: list[str]


def _paid_to(
    to: frozenset[str], tx_hash: str, number: int, block_hash: str, paid: list[InternalPayment]
) -> list[InternalTransfer]:
    """Those of one transaction's internal payments that went to one of `to`."""
    return [
        InternalTransfer(
            tx_hash, payment.sender, payment.to, payment.value, number, block_hash, payment.ordinal
        )
        for payment in paid
        if payment.to in to
    ]


# geth's tracer of calls, as `debug_trace*` take it.
CALL_TRACER = {"tracer": "callTracer"}


def _quantity(value: int | str) -> int:
    """A number as traces give it: a JSON number, or a hex string from some nodes."""
    return value if isinstance(value, int) else int(value, 16)


@dataclass(frozen=True)
class ScannedRange:
    """The logs of each filter over a block range, and that range's last block, all in one
    node's answer."""

    logs: list[list[dict[str, Any]]]
    end_block: BlockHead


def _raw_log(entry: dict[str, Any]) -> dict[str, Any]:
    """A JSON-RPC log with its quantities as ints (hashes and data stay 0x-hex)."""
    return {
        **entry,
        "blockNumber": int(entry["blockNumber"], 16),
        "logIndex": int(entry["logIndex"], 16),
        "transactionIndex": int(entry.get("transactionIndex", "0x0"), 16),
    }


@dataclass(frozen=True)
class CallOutcome:
    """One call as the node ran it in a simulation (eth_simulateV1): whether it ran to the end,
    what it returned (its revert data when it did not), and the logs it emitted (quantities as
    ints, as in `_raw_log`)."""

    succeeded: bool
    returned: bytes
    logs: list[dict[str, Any]]


@dataclass(frozen=True)
class ChainPoll:
    head: BlockHead
    priority_fee_per_gas: int
    native_balance: int
    token_balances: list[int]
    reads: list[bytes | None]


def _balance_of(token: str, holder: str) -> tuple[RPCEndpoint, Any]:
    return _eth_call(token, function(ERC20, "balanceOf").encode(holder))


class EvmClient:
    """Reads one chain. Every call is a read, so callers may retry freely."""

    def __init__(
        self, chain_id: ChainId, rpc_url: str, *, timeout_seconds: float, metrics: Metrics
    ) -> None:
        self.chain_id = chain_id
        self._rpc_calls = metrics.rpc_calls
        self.rpc_url = rpc_url
        # For messages and logs: a provider's URL often carries an access key in its path,
        # query or user info, so only the scheme, host and port are ever shown.
        self.endpoint = shown_endpoint(rpc_url)
        self.web3 = AsyncWeb3(JsonRpcProvider(rpc_url, timeout_seconds=timeout_seconds))
        self.batching = Batching()
        self._in_flight = asyncio.Semaphore(CALLS_IN_FLIGHT)
        self._batches_refused = metrics.rpc_batches_refused.labels(chain_id)

    async def remote_chain_id(self) -> int:
        return int(await self._read("eth_chainId", self.web3.eth.chain_id))

    async def head(self) -> BlockHead:
        return await self._block("latest")

    async def poll(self, holder: str, tokens: Sequence[str], reads: list[Read]) -> ChainPoll:
        """The head, the priority fee, `holder`'s native and token balances, and `eth_call` of
        each (contract, calldata) read: one JSON-RPC batch. The reads may fail one by one
        (None); anything else failing fails the poll."""
        calls = [
            (RPCEndpoint("eth_getBlockByNumber"), ["latest", False]),
            (RPCEndpoint("eth_maxPriorityFeePerGas"), []),
            (RPCEndpoint("eth_getBalance"), [holder, "latest"]),
            *(_balance_of(token, holder) for token in tokens),
            *(_eth_call(to, data) for to, data in reads),
        ]
        required = 3 + len(tokens)
        with self._counted("chain_poll"):
            replies = await self._replies(calls, "chain poll", partial=True)
            if any(reply is None for reply in replies[:required]):
                raise ChainError(f"chain {self.chain_id}: chain poll failed: {replies[:required]}")
        block, priority_fee, native, *balances = replies[:required]
        return ChainPoll(
            head=_block_head(block),
            priority_fee_per_gas=int(priority_fee, 16),
            native_balance=int(native, 16),
            token_balances=[int(balance, 16) for balance in balances],
            reads=[_returned(reply) for reply in replies[required:]],
        )

    async def balance_and_allowance(
        self, currency: str, holder: str, spender: str
    ) -> tuple[int, int | None]:
        """One JSON-RPC batch (the quote path's only read)."""
        calls: list[tuple[RPCEndpoint, Any]]
        if int(currency, 16) == 0:
            calls = [(RPCEndpoint("eth_getBalance"), [holder, "latest"])]
        else:
            calls = [
                _balance_of(currency, holder),
                _eth_call(currency, function(ERC20, "allowance").encode(holder, spender)),
            ]
        replies = await self._batch(calls, "balance_read")
        values = [int(result, 16) for result in replies]
        return values[0], (values[1] if len(values) > 1 else None)

    async def native_balances(self, holders: Sequence[str], block: int) -> list[int]:
        """One JSON-RPC batch of `eth_getBalance` at `block` (the gas keeper's read)."""
        if not holders:
            return []
        calls: list[tuple[RPCEndpoint, Any]] = [
            (RPCEndpoint("eth_getBalance"), [holder, hex(block)]) for holder in holders
        ]
        return [int(result, 16) for result in await self._batch(calls, "native_balances")]

    @contextmanager
    def _counted(self, call: str) -> Iterator[None]:
        """Count the JSON-RPC call made inside, by its outcome (a typed ChainError or ok); a
        batch refused whole is not counted here (`rpc_batches_refused`): its calls go again
        one by one."""
        try:
            yield
        except BatchRefused:
            raise
        except ChainError as failure:
            self._rpc_calls.labels(self.chain_id, call, rpc_outcome(failure)).inc()
            raise
        self._rpc_calls.labels(self.chain_id, call, RPC_OK).inc()

    async def _batch(self, calls: list[tuple[RPCEndpoint, Any]], call: str) -> list[Any]:
        """One counted JSON-RPC batch whose every call must answer; `call` names it."""
        with self._counted(call):
            return await self._replies(calls, call)

    async def _replies(
        self,
        calls: list[tuple[RPCEndpoint, Any]],
        what: str,
        *,
        partial: bool = False,
        patient: bool = False,
    ) -> list[Any]:
        replies = await self._answers(calls, what, patient=patient)
        if partial:
            return [reply.get("result") for reply in replies]
        return self._results(replies, what)

    def _results(self, replies: list[Any], what: str) -> list[Any]:
        """Each reply's result; ChainError if any is an error."""
        if any("result" not in reply for reply in replies):
            raise ChainError(f"chain {self.chain_id}: {what} failed: {_errors_of(replies)}")
        return [reply["result"] for reply in replies]

    async def _answers(
        self, calls: list[tuple[RPCEndpoint, Any]], what: str, *, patient: bool = False
    ) -> list[Any]:
        """Each call's JSON-RPC answer (a result or an error), in the calls' order: one batch,
        or the calls one by one while the endpoint refuses batches (`patient`: see
        `_one_by_one`)."""
        try:
            return await self._batch_answers(calls, what)
        except BatchRefused:
            return await self._one_by_one(calls, patient=patient)

    async def _batch_answers(self, calls: list[tuple[RPCEndpoint, Any]], what: str) -> list[Any]:
        """`_answers` as one batch, one node's answer; BatchRefused (noted) when the endpoint
        refuses batches."""
        if not self.batching.allowed():
            raise BatchRefused("batches refused earlier")
        provider = self._provider()
        try:
            replies = await provider.make_batch_request(calls)
        except BatchRefused as refusal:
            self._note_refusal(refusal)
            raise
        except TRANSPORT_ERRORS as exc:
            raise self._unreachable(exc) from exc
        if not isinstance(replies, list) or len(replies) != len(calls):
            raise ChainError(f"chain {self.chain_id}: {what} failed: {str(replies)[:300]}")
        return replies

    async def _one_by_one(
        self, calls: list[tuple[RPCEndpoint, Any]], *, patient: bool = False
    ) -> list[Any]:
        """Each call's answer, the calls sent each on its own, at once; or, `patient` (a scan's
        hundreds of calls, every one needed), `CALLS_IN_FLIGHT` at a time, each answered 429
        sent again after a wait (`_patient_call`). A quote's read is never kept waiting so."""
        provider = self._provider()
        send = self._patient_call if patient else provider.make_request
        answers = await asyncio.gather(
            *(send(method, params) for method, params in calls), return_exceptions=True
        )
        for answer in answers:
            if isinstance(answer, TRANSPORT_ERRORS):
                raise self._unreachable(answer) from answer
            if isinstance(answer, BaseException):
                raise answer
        return answers

    async def _patient_call(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        """One call, sent again after the wait the endpoint asks for when it answers 429."""
        provider = self._provider()
        attempts = 1
        async with self._in_flight:
            while True:
                try:
                    return await provider.make_request(method, params)
                except aiohttp.ClientResponseError as exc:
                    if exc.status != 429 or attempts == RATE_LIMITED_ATTEMPTS:
                        raise
                    self._rpc_calls.labels(self.chain_id, method, "rate_limited").inc()
                    asked = _retry_after(exc)
                    await asyncio.sleep(
                        min(RATE_LIMIT_WAIT_SECONDS, 1.0 if asked is None else asked)
                    )
                attempts += 1

    def _note_refusal(self, refusal: BatchRefused) -> None:
        self.batching.note(refusal, chain_id=self.chain_id, endpoint=self.endpoint)
        self._batches_refused.inc()

    def _provider(self) -> JsonRpcProvider:
        provider = self.web3.provider
        assert isinstance(provider, JsonRpcProvider)
        return provider

    async def scan(self, filters: list[LogFilter], start: int, end: int) -> ScannedRange:
        """Logs of every filter over [start, end] and block `end`, in one JSON-RPC batch: one
        node answers it all, so a node that has not reached `end` (it would clamp the logs
        to its own head and say nothing) is caught by its missing block: NodeBehind.

        A node that refuses a batch's logs (providers cap the blocks or results one log query
        covers) is asked for the first half of it, and so on down to single blocks, then for
        the rest a batch of that width at a time (`kinds.evm.log_ranges`). Each batch is still
        one node's answer checked by its own last block; a single block refused raises
        LogsRefused. On an endpoint that refuses batches the range is read block by block
        (`_scan_blocks`)."""
        parts: list[ScannedRange] = []
        widths, first = LogRange(end - start + 1), start
        while first <= end:
            last = widths.end(first, end)
            try:
                if self.batching.allowed():
                    parts.append(await self._scan_batch(filters, first, last))
                else:
                    parts.append(await self._scan_blocks(filters, first, last))
            except LogsRefused:
                if not widths.narrowed(first, last):
                    raise
                continue
            except BatchRefused:
                continue  # noted: the same range again, block by block
            first = last + 1
        each_filter = zip(*(part.logs for part in parts), strict=True)
        logs = [[entry for found in parts_found for entry in found] for parts_found in each_filter]
        return ScannedRange(logs, parts[-1].end_block)

    async def _scan_batch(self, filters: list[LogFilter], start: int, end: int) -> ScannedRange:
        """`scan` of [start, end] in one JSON-RPC batch; LogsRefused if the node refuses its
        logs."""
        calls: list[tuple[RPCEndpoint, Any]] = [
            (
                RPCEndpoint("eth_getLogs"),
                [
                    {
                        "address": list(log_filter.addresses),
                        "fromBlock": hex(start),
                        "toBlock": hex(end),
                        "topics": list(log_filter.topics),
                    }
                ],
            )
            for log_filter in filters
        ]
        calls.append((RPCEndpoint("eth_getBlockByNumber"), [hex(end), False]))
        with self._counted("log_scan"):
            *log_answers, block_answer = await self._batch_answers(calls, "log scan")
            refused = [answer for answer in log_answers if "result" not in answer]
            if refused:
                raise LogsRefused(
                    f"chain {self.chain_id}: logs of blocks {start}-{end} refused: "
                    f"{_errors_of(refused)}"
                )
            if "result" not in block_answer:
                raise ChainError(
                    f"chain {self.chain_id}: block {end} not read: {_errors_of([block_answer])}"
                )
            logs, block = [answer["result"] for answer in log_answers], block_answer["result"]
            if block is None:
                raise self._behind(end)
        return ScannedRange(
            [[_raw_log(entry) for entry in found] for found in logs], _block_head(block)
        )

    async def _scan_blocks(self, filters: list[LogFilter], start: int, end: int) -> ScannedRange:
        """`scan` of [start, end] without batches: single calls may each reach another node
        behind a load balancer, and a range's logs from one that has not reached `end` would
        come back clamped with nothing to tell. So each block's header is read by its number
        (a node without it answers none: NodeBehind), the headers must link into one chain
        (else the chain reorganised meanwhile: try again), and each block's logs are asked by
        its hash, which a node without that very block refuses instead of answering empty."""
        with self._counted("log_scan"):
            heads: list[BlockHead] = []
            logs: list[list[dict[str, Any]]] = [[] for _ in filters]
            for first in range(start, end + 1, BLOCKS_AT_ONCE):
                numbers = range(first, min(end, first + BLOCKS_AT_ONCE - 1) + 1)
                window = await self._linked_heads(numbers, heads[-1] if heads else None)
                for found, more in zip(
                    logs, await self._logs_by_hash(filters, window), strict=True
                ):
                    found.extend(more)
                heads.extend(window)
        return ScannedRange(logs, heads[-1])

    async def _linked_heads(self, numbers: range, parent: BlockHead | None) -> list[BlockHead]:
        """Blocks `numbers`, each the child of the one before (`parent` before the first)."""
        calls = [(RPCEndpoint("eth_getBlockByNumber"), [hex(n), False]) for n in numbers]
        blocks = await self._replies(calls, "log scan", patient=True)
        heads: list[BlockHead] = []
        for number, block in zip(numbers, blocks, strict=True):
            if block is None:
                raise self._behind(number)
            head = _block_head(block)
            before = heads[-1] if heads else parent
            if before is not None and head.parent_hash != before.hash:
                raise ChainError(
                    f"chain {self.chain_id}: blocks {before.number} and {number} read from "
                    "different forks (the chain reorganised while scanned)"
                )
            heads.append(head)
        return heads

    async def _logs_by_hash(
        self, filters: list[LogFilter], heads: list[BlockHead]
    ) -> list[list[dict[str, Any]]]:
        """Each filter's logs in `heads`, in block order, each block's asked by its hash."""
        calls = [
            (
                RPCEndpoint("eth_getLogs"),
                [
                    {
                        "address": list(log_filter.addresses),
                        "blockHash": head.hash,
                        "topics": list(log_filter.topics),
                    }
                ],
            )
            for log_filter in filters
            for head in heads
        ]
        answers = iter(await self._answers(calls, "log scan", patient=True))
        logs: list[list[dict[str, Any]]] = []
        for _ in filters:
            found: list[dict[str, Any]] = []
            for head in heads:
                answer = next(answers)
                if "result" not in answer:
                    raise NodeBehind(
                        f"chain {self.chain_id}: logs of block {head.number} ({head.hash}) not "
                        f"read: {_errors_of([answer])}",
                        block_number=head.number,
                    )
                found.extend(_raw_log(entry) for entry in answer["result"])
            logs.append(found)
        return logs

    async def fill_tx_hashes(self, filler: str, order_id: str, *, not_before: int) -> list[str]:
        """Transactions whose Filler emitted OrderFilled for this order (indexed topic), searched
        from the head back a window of blocks at a time, to the first window wholly older than
        `not_before` (unix seconds: the request's creation, before which no fill can be); each
        window is a `scan`, narrowed as a node capping log queries needs (a search from block
        0 was refused for good)."""
        log_filter = LogFilter((filler,), (event("Filler", "OrderFilled").topic, order_id))
        end = (await self.head()).number
        while True:
            start = max(0, end - FILL_SEARCH_BLOCKS + 1)
            scanned = await self.scan([log_filter], start, end)
            found = [str(entry["transactionHash"]) for entry in scanned.logs[0]]
            if found or start == 0 or scanned.end_block.timestamp < not_before:
                return found
            end = start - 1

    async def transaction_input(self, tx_hash: str) -> tuple[bytes, str]:
        """The transaction's calldata and its `to` address."""
        tx = await self._read("eth_getTransactionByHash", self.web3.eth.get_transaction(tx_hash))  # type: ignore[arg-type]
        return bytes(tx["input"]), str(tx.get("to") or "")

    async def sent_transaction(self, tx_hash: str) -> TransactionFacts | None:
        """Who sent the transaction, to where, with what value and calldata; None if the
        node has not seen it."""
        (tx,) = await self._batch(
            [(RPCEndpoint("eth_getTransactionByHash"), [tx_hash])], "eth_getTransactionByHash"
        )
        if tx is None:
            return None
        return TransactionFacts(
            sender=str(tx["from"]).lower(),
            to=str(tx.get("to") or "").lower(),
            value=int(tx["value"], 16),
            data=bytes.fromhex(str(tx["input"])[2:]),
        )

    async def transaction_sender(self, tx_hash: str) -> tuple[str, int] | None:
        (tx,) = await self._batch(
            [(RPCEndpoint("eth_getTransactionByHash"), [tx_hash])], "eth_getTransactionByHash"
        )
        return None if tx is None else (str(tx["from"]).lower(), int(tx["nonce"], 16))

    async def block_at(self, number: int) -> BlockHead | None:
        return await self._block(hex(number))

    async def value_transfers(self, number: int, to: frozenset[str]) -> list[ValueTransfer]:
        """Block `number`'s transactions paying ether to one of `to` (lower-case addresses)
        that succeeded. A block lists a transaction that reverted with its value all the same
        (one to a deployed deposit address with calldata it does not take, or too little gas
        for its code): only its receipt tells that nothing moved, so the receipts of the
        block's transactions to those addresses are read too, in one batch."""
        (block,) = await self._batch(
            [(RPCEndpoint("eth_getBlockByNumber"), [hex(number), True])], "eth_getBlockByNumber"
        )
        if block is None:
            raise self._behind(number)
        head = _block_head(block)
        paying = [
            tx
            for tx in block.get("transactions", [])
            if tx.get("to") and str(tx["to"]).lower() in to and int(tx["value"], 16) > 0
        ]
        if not paying:
            return []
        receipts = await self._batch(
            [(RPCEndpoint("eth_getTransactionReceipt"), [tx["hash"]]) for tx in paying],
            "eth_getTransactionReceipt",
        )
        return [
            ValueTransfer(
                tx_hash=str(tx["hash"]),
                sender=str(tx["from"]).lower(),
                to=str(tx["to"]).lower(),
                value=int(tx["value"], 16),
                block=head,
            )
            for tx, receipt in zip(paying, receipts, strict=True)
            if self._succeeded_in(head, str(tx["hash"]), receipt)
        ]

    def _succeeded_in(self, block: BlockHead, tx_hash: str, receipt: Any) -> bool:
        """Whether the receipt says the transaction of `block` succeeded. A receipt the node
        answering has not got, or of another block (the block was reorged away since it was
        read), proves nothing either way: NodeBehind or ChainError, the read is tried again."""
        if receipt is None:
            raise self._behind(block.number)
        if not isinstance(receipt, dict) or "status" not in receipt:
            raise ChainError(f"chain {self.chain_id}: receipt {tx_hash}: {str(receipt)[:200]}")
        if str(receipt.get("blockHash", "")).lower() != block.hash.lower():
            raise ChainError(
                f"chain {self.chain_id}: the receipt of {tx_hash} is of block "
                f"{receipt.get('blockHash')}, not {block.hash}"
            )
        return int(str(receipt["status"]), 16) == 1

    async def internal_transfers(
        self, start: int, end: int, to: frozenset[str], traces: TraceApi
    ) -> TracedRange:
        """Ether paid to one of `to` (lower-case addresses) by contracts' internal calls and
        self-destructs in blocks `start`..`end`, that took effect, read from the node's
        `traces` (`kinds.evm.internal_transfers`); and the transactions it could not trace."""
        if traces is TraceApi.GETH:
            return await self._frame_traced_blocks(start, end, to)
        return await self._parity_traced(start, end, to)

    async def _traces_of(self, method: str, params: list[Any]) -> Any | None:
        """One call's traces; None when the node cannot give them: it answered an error for
        this call, no answer in time, or one that cannot be read, while it answers its head
        at once. The endpoint failing (an HTTP error, a connection refused or dropped, 429),
        a node behind, or a head not answered either, is raised: nothing is passed over while
        the node itself fails."""
        try:
            (answer,) = await self._batch([(RPCEndpoint(method), params)], method)
        except ChainError as exc:
            endpoint_failed = isinstance(exc, ChainUnreachable) and not isinstance(
                exc.__cause__, TimeoutError | MalformedReply
            )
            if endpoint_failed or isinstance(exc, NodeBehind):
                raise
            await self.head()
            return None
        return answer

    async def _not_traced(self, reading: TracedRange, tx_hash: str, number: int) -> None:
        """A transaction of block `number` the node did not trace, named in `reading`; unless
        the node answering does not know it (a node behind the one that gave the block, whose
        refusal says nothing of the transaction): NodeBehind."""
        if await self.transaction_sender(tx_hash) is None:
            raise self._behind(number)
        reading.untraced.append(tx_hash)

    async def _transaction_payments(
        self, reading: TracedRange, to: frozenset[str], tx_hash: str, number: int, block_hash: str
    ) -> None:
        """One transaction's parity-style traces, into `reading`."""
        traces = await self._traces_of("trace_transaction", [tx_hash])
        if not isinstance(traces, list):
            await self._not_traced(reading, tx_hash, number)
            return
        reading.paid.extend(_paid_to(to, tx_hash, number, block_hash, internal_payments(traces)))

    async def _parity_traced(self, start: int, end: int, to: frozenset[str]) -> TracedRange:
        """`trace_filter` finds the transactions, each one's `trace_transaction` tells which
        calls stood. Block `end` is asked in the same batch, so a node that has not reached it
        (whose empty answer would prove nothing) is NodeBehind. On an endpoint that refuses
        batches, each block's traces are read whole (`trace_block`: a node without the block
        has none to give, NodeBehind)."""
        calls: list[tuple[RPCEndpoint, Any]] = [
            (RPCEndpoint("eth_getBlockByNumber"), [hex(end), False]),
            (
                RPCEndpoint("trace_filter"),
                [{"fromBlock": hex(start), "toBlock": hex(end), "toAddress": sorted(to)}],
            ),
        ]
        try:
            with self._counted("trace_filter"):
                replies = await self._batch_answers(calls, "trace_filter")
        except BatchRefused:
            return await self._traced_blocks(start, end, to)
        block, traced = self._results(replies, "trace_filter")
        if block is None:
            raise self._behind(end)
        mined_in = {
            str(trace["transactionHash"]): (
                _quantity(trace["blockNumber"]),
                str(trace["blockHash"]),
            )
            for trace in traced or []
            if trace.get("traceAddress") and trace.get("transactionHash")
        }
        reading = TracedRange([], [])
        for tx_hash, (number, block_hash) in mined_in.items():
            await self._transaction_payments(reading, to, tx_hash, number, block_hash)
        return reading

    async def _traced_blocks(self, start: int, end: int, to: frozenset[str]) -> TracedRange:
        """`internal_transfers` read block by block: each block's header, then, when it has
        transactions, its traces whole (each transaction's on its own when the node cannot
        give the block's). Calls may reach different nodes here, so the traces must be of
        that very block (its hash on every trace, and some trace for a block with
        transactions): else the node answering has not got it, NodeBehind."""
        reading = TracedRange([], [])
        for number in range(start, end + 1):
            (header,) = await self._batch(
                [(RPCEndpoint("eth_getBlockByNumber"), [hex(number), False])],
                "eth_getBlockByNumber",
            )
            if header is None:
                raise self._behind(number)
            if not header.get("transactions"):
                continue
            block_hash = str(header["hash"])
            traces = await self._traces_of("trace_block", [hex(number)])
            if traces is None:
                for tx_hash in header["transactions"]:
                    await self._transaction_payments(reading, to, str(tx_hash), number, block_hash)
                continue
            if not traces or any(trace.get("blockHash") != block_hash for trace in traces):
                raise self._behind(number)
            by_transaction: dict[str, list[dict[str, Any]]] = {}
            for trace in traces:
                if trace.get("transactionHash"):
                    by_transaction.setdefault(str(trace["transactionHash"]), []).append(trace)
            for tx_hash, of_tx in by_transaction.items():
                paid = internal_payments(of_tx)
                reading.paid.extend(_paid_to(to, tx_hash, number, block_hash, paid))
        return reading

    async def _frame_traced_blocks(self, start: int, end: int, to: frozenset[str]) -> TracedRange:
        """`internal_transfers` from geth's callTracer: the range's headers in one batch (a
        node that has not reached one is NodeBehind), then each block with transactions traced
        whole, by its hash (a node without that very block cannot trace it, so its calls are
        never another block's), one block a call: a busy block's trace takes the node a good
        part of the RPC timeout, and its answer is megabytes. A block the node cannot trace
        whole has each transaction traced on its own."""
        numbers = range(start, end + 1)
        headers = await self._batch(
            [(RPCEndpoint("eth_getBlockByNumber"), [hex(number), False]) for number in numbers],
            "eth_getBlockByNumber",
        )
        for number, header in zip(numbers, headers, strict=True):
            if header is None:
                raise self._behind(number)
        reading = TracedRange([], [])
        for header in headers:
            if header.get("transactions"):
                await self._block_frames(reading, header, to)
        return reading

    async def _block_frames(
        self, reading: TracedRange, header: dict[str, Any], to: frozenset[str]
    ) -> None:
        """One block's payments to one of `to` into `reading`, from its transactions' call
        frames: the block's (one per transaction, in its order, or the node's answer is
        wrong), and for a transaction the block's trace left out, or a block the node could
        not trace whole, that transaction's own."""
        number, block_hash = _quantity(header["number"]), str(header["hash"])
        hashes = [str(tx_hash).lower() for tx_hash in header["transactions"]]
        traced = await self._traces_of("debug_traceBlockByHash", [block_hash, CALL_TRACER])
        if traced is None:
            traced = [None] * len(hashes)
        if not isinstance(traced, list) or len(traced) != len(hashes):
            raise ChainError(
                f"chain {self.chain_id}: debug_traceBlockByHash of block {number} answered "
                f"{str(traced)[:100]} for {len(hashes)} transactions"
            )
        for tx_hash, entry in zip(hashes, traced, strict=True):
            if isinstance(entry, dict) and str(entry.get("txHash", tx_hash)).lower() != tx_hash:
                raise ChainError(
                    f"chain {self.chain_id}: debug_traceBlockByHash of block {number} answered "
                    f"transaction {entry.get('txHash')} for {tx_hash}"
                )
            frame = entry.get("result") if isinstance(entry, dict) else None
            if not isinstance(frame, dict):
                frame = await self._traces_of("debug_traceTransaction", [tx_hash, CALL_TRACER])
            if not isinstance(frame, dict):
                await self._not_traced(reading, tx_hash, number)
                continue
            reading.paid.extend(
                _paid_to(to, tx_hash, number, block_hash, call_frame_payments(frame))
            )

    def _behind(self, number: int) -> NodeBehind:
        """The node that answered has not reached block `number`."""
        return NodeBehind(
            f"chain {self.chain_id}: the node answering has not reached block {number}",
            block_number=number,
        )

    async def _block(self, tag: str) -> BlockHead:
        """Raw JSON-RPC, without web3's block formatting; a block the node does not have is a
        ChainError (as web3's BlockNotFound was)."""
        (block,) = await self._batch(
            [(RPCEndpoint("eth_getBlockByNumber"), [tag, False])], "eth_getBlockByNumber"
        )
        if block is None:
            raise ChainError(f"chain {self.chain_id}: block {tag} not found")
        return _block_head(block)

    async def receipt(self, tx_hash: str) -> Any | None:
        with self._counted("eth_getTransactionReceipt"):
            try:
                return await self.web3.eth.get_transaction_receipt(tx_hash)  # type: ignore[arg-type]
            except TransactionNotFound:
                return None
            except TRANSPORT_ERRORS as exc:
                raise self._unreachable(exc) from exc
            except Web3Exception as exc:
                raise ChainError(f"chain {self.chain_id}: receipt {tx_hash}: {exc}") from exc

    async def fee_paid(self, tx_hash: str) -> int | None:
        """What the mined transaction's sender paid for it, in wei; None if not mined. Read
        raw, two fields of the receipt: web3's formatting of a whole receipt (each log's
        fields) runs on the event loop, here inside the transaction that confirms a deposit."""
        (fee,) = await self.fees_paid([tx_hash])
        return fee

    async def fees_paid(self, tx_hashes: Sequence[str]) -> list[int | None]:
        """`fee_paid` of each, their receipts read in one JSON-RPC batch (a block's deposits:
        one request, not one each)."""
        if not tx_hashes:
            return []
        receipts = await self._batch(
            [(RPCEndpoint("eth_getTransactionReceipt"), [tx_hash]) for tx_hash in tx_hashes],
            "eth_getTransactionReceipt",
        )
        return [
            self._fee_of(tx_hash, receipt)
            for tx_hash, receipt in zip(tx_hashes, receipts, strict=True)
        ]

    def _fee_of(self, tx_hash: str, receipt: Any) -> int | None:
        if receipt is None:
            return None
        try:
            return int(receipt["gasUsed"], 16) * int(receipt["effectiveGasPrice"], 16)
        except (KeyError, TypeError, ValueError) as exc:
            raise ChainError(f"chain {self.chain_id}: receipt {tx_hash}: {receipt!r}") from exc

    async def pending_nonce(self, address: str) -> int:
        return int(
            await self._read(
                "eth_getTransactionCount",
                self.web3.eth.get_transaction_count(Web3.to_checksum_address(address), "pending"),
            )
        )

    async def mined_nonce(self, address: str) -> int:
        """The account's transaction count in the latest block: nonces below it are used."""
        return int(
            await self._read(
                "eth_getTransactionCount",
                self.web3.eth.get_transaction_count(Web3.to_checksum_address(address), "latest"),
            )
        )

    async def estimate_gas(self, tx: dict[str, Any]) -> int:
        """Simulates the call: `Reverted` when the contract refuses it (decoded with our ABIs);
        any other failure (the node, the network) is another ChainError."""
        return int(await self._read("eth_estimateGas", self.web3.eth.estimate_gas(tx)))  # type: ignore[arg-type]

    async def estimate_call(self, sender: str, to: str, data: str, value: int) -> int:
        """`estimate_gas` of a plain call (hex `data`), its request written here and its answer
        checked by web3's own rules (the same `Reverted` for a revert): web3's formatting on
        the way out and in cost about 2 ms of the event loop a call, which a fill's simulation
        spends inside the transaction that confirms its deposit."""
        params = [{"from": sender, "to": to, "data": data, "value": hex(value)}]
        answer = self._plain(
            "eth_estimateGas", params, error_formatters=raise_contract_logic_error_on_revert
        )
        return int(await self._read("eth_estimateGas", answer), 16)

    async def _plain(
        self,
        method: str,
        params: list[Any],
        *,
        error_formatters: Callable[[RPCResponse], Any] | None = None,
    ) -> str:
        """One call whose params are in JSON-RPC form already and whose answer is a hex string,
        without web3's request and result formatting; its errors raised by web3's own rules
        (`error_formatters` as web3 has them for `method`), for `_read` to type."""
        response = await self._provider().make_request(RPCEndpoint(method), params)
        answer = self.web3.manager.formatted_response(
            response, params, error_formatters=error_formatters
        )
        if not isinstance(answer, str):
            raise ChainError(f"chain {self.chain_id}: {method} answered {answer!r}")
        return answer

    async def call(self, to: str, data: bytes) -> bytes:
        """What `eth_call` of `data` to `to` returned at the latest block (ChainError when the
        node fails or the call reverts)."""
        (answer,) = await self._batch([_eth_call(to, data)], "eth_call")
        returned = _returned(answer if isinstance(answer, str) else None)
        if returned is None:
            raise ChainError(f"chain {self.chain_id}: eth_call answered {answer!r}")
        return returned

    async def code(self, address: str) -> bytes:
        """The account's code at the latest block (empty for a plain account)."""
        (code,) = await self._batch(
            [(RPCEndpoint("eth_getCode"), [Web3.to_checksum_address(address), "latest"])],
            "eth_getCode",
        )
        try:
            return bytes.fromhex(str(code)[2:])
        except ValueError as exc:
            raise ChainError(f"chain {self.chain_id}: eth_getCode answered {code!r}") from exc

    async def simulate(self, call: dict[str, Any], *, block: int | None = None) -> CallOutcome:
        """Run `call` (JSON-RPC form, quantities in hex) on the state after `block` (the latest
        by default) without checking its sender's nonce or balance, and see what it did; a
        revert is an outcome here, not an error."""
        tag = "latest" if block is None else hex(block)
        request = {"blockStateCalls": [{"calls": [call]}], "validation": False}
        (blocks,) = await self._batch(
            [(RPCEndpoint("eth_simulateV1"), [request, tag])], "eth_simulateV1"
        )
        try:
            (ran,) = blocks[0]["calls"]
            return CallOutcome(
                succeeded=int(ran["status"], 16) == 1,
                returned=bytes.fromhex(ran.get("returnData", "0x")[2:]),
                logs=[_raw_log(entry) for entry in ran.get("logs", [])],
            )
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise ChainError(f"chain {self.chain_id}: eth_simulateV1 answered {exc!r}") from exc

    async def send_raw(self, raw_transaction: bytes) -> str:
        """Broadcast a signed transaction; its hash. A plain call (`_plain`): web3's formatting
        cost more than the node's answer, on the path from a deposit's commit to its fill. A
        node's refusal is raised as its kind (`refusal_of`)."""
        answer = self._plain("eth_sendRawTransaction", ["0x" + raw_transaction.hex()])
        try:
            return (await self._read("eth_sendRawTransaction", answer)).lower()
        except ChainUnreachable:
            raise
        except ChainError as exc:
            raise refusal_of(str(exc)) from exc

    async def send_raw_batch(self, raw_transactions: Sequence[bytes]) -> list[str | ChainError]:
        """Broadcast signed transactions together: one JSON-RPC batch (one by one where the
        endpoint refuses batches); each one's hash, or the node's refusal of it as its kind
        (`refusal_of`). ChainUnreachable when the endpoint cannot be reached at all."""
        calls = [
            (RPCEndpoint("eth_sendRawTransaction"), ["0x" + raw.hex()]) for raw in raw_transactions
        ]
        with self._counted("eth_sendRawTransaction"):
            replies = await self._answers(calls, "eth_sendRawTransaction")
        return [_sent_or_refused(reply, self.chain_id) for reply in replies]

    async def _read(self, what: str, pending: Awaitable[T]) -> T:
        """One counted JSON-RPC call, `what` its method."""
        with self._counted(what):
            try:
                return await pending
            except TRANSPORT_ERRORS as exc:
                raise self._unreachable(exc) from exc
            except ContractLogicError as exc:
                data = _revert_data(exc.data)
                reason = decode_revert(data)
                raise Reverted(
                    f"chain {self.chain_id}: {what} reverted: {reason.message}",
                    data=data,
                    reason=reason,
                ) from exc
            except Web3Exception as exc:
                raise ChainError(f"chain {self.chain_id}: {what} failed: {exc}") from exc

    def _unreachable(self, exc: BaseException) -> ChainUnreachable:
        """A transport failure as its outcome: rate limited (429) or unreachable."""
        if isinstance(exc, aiohttp.ClientResponseError) and exc.status == 429:
            return RateLimited(
                f"chain {self.chain_id}: {self.endpoint} rate limited",
                retry_after_seconds=_retry_after(exc),
            )
        return ChainUnreachable(
            f"chain {self.chain_id}: {self.endpoint} unreachable: {_transport_failure(exc)}"
        )

    async def check_identity(self) -> None:
        """Raise unless the endpoint answers and serves the configured chain."""
        remote = await self.remote_chain_id()
        if remote != self.chain_id:
            raise ChainError(f"chain {self.chain_id}: {self.endpoint} serves chain id {remote}")

    async def check_traces(self, traces: TraceApi) -> None:
        """Raise unless the endpoint serves the `traces` `internal_transfers` reads: parity's
        `trace_filter`, asked for the head block's calls to nobody (nodes take block numbers
        there, not tags); geth's callTracer, asked to trace a call to nobody (tracing a whole
        block would be a readiness check's cost)."""
        if traces is TraceApi.GETH:
            call = {"to": ZERO_ADDRESS}
            (frame,) = await self._batch(
                [(RPCEndpoint("debug_traceCall"), [call, "latest", CALL_TRACER])],
                "debug_traceCall",
            )
            if not isinstance(frame, dict) or "type" not in frame:
                raise ChainError(
                    f"chain {self.chain_id}: debug_traceCall answered {str(frame)[:100]}"
                )
            return
        head = hex((await self.head()).number)
        query = {"fromBlock": head, "toBlock": head, "toAddress": [ZERO_ADDRESS]}
        (traced,) = await self._batch([(RPCEndpoint("trace_filter"), [query])], "trace_filter")
        if not isinstance(traced, list):
            raise ChainError(f"chain {self.chain_id}: trace_filter answered {str(traced)[:100]}")

    async def close(self) -> None:
        await self.web3.provider.disconnect()


# What nodes (geth, erigon, reth, nethermind, anvil) say when they refuse a transaction for
# these reasons: their answers are text only, so they are read here, once, into types.
_REFUSALS: tuple[tuple[tuple[str, ...], type[SendRefused]], ...] = (
    (("already known", "alreadyknown", "already imported", "known transaction"), AlreadyKnown),
    (("nonce too low", "nonce is too low", "oldnonce"), NonceTooLow),
    (("insufficient funds", "insufficientfunds"), CannotPayGas),
)


def _sent_or_refused(reply: Any, chain_id: int) -> str | ChainError:
    """One answer of a batch of `eth_sendRawTransaction`: the hash, or the refusal."""
    result = reply.get("result") if isinstance(reply, dict) else None
    if isinstance(result, str):
        return result.lower()
    error = reply.get("error") if isinstance(reply, dict) else reply
    message = error.get("message", str(error)) if isinstance(error, dict) else str(error)
    return refusal_of(f"chain {chain_id}: eth_sendRawTransaction failed: {message}")


def refusal_of(message: str) -> SendRefused:
    """A node's refusal of `eth_sendRawTransaction`, as the kind its message names."""
    said = message.lower().replace("_", " ")
    for markers, kind in _REFUSALS:
        if any(marker in said for marker in markers):
            return kind(message)
    return SendRefused(message)
