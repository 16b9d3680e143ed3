"""Indexer, one per origin chain: Depository deposits → confirmed, judged, matched to requests.

It scans logs from a cursor kept in the database, so a restart resumes where it stopped; each
deposit is stored once (unique by chain, tx and log index), so a re-scan counts nothing twice.
A deposit is acted on only when it has the confirmations its value calls for and its block is
still canonical; one that left the chain before that is marked reorged and never paid for.
Confirmed deposits stay watched until final (`reorg_watch`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.domain.confirmations import deep_enough
from crossfill.domain.erc7683 import OpenedOrder
from crossfill.domain.status import RequestStatus
from crossfill.errors import ChainError
from crossfill.first_on_loop import fill_path
from crossfill.kinds.evm.client import BlockHead, LogFilter, ScannedRange
from crossfill.kinds.evm.deposit_judge import ChunkReads, DepositJudge, read_chunk
from crossfill.kinds.evm.depository_logs import (
    DepositLog,
    address_topic,
    decode_deposit,
    decode_implicit_deposit,
    deposit_topics,
    erc20_transfer_event,
    to_hex,
)
from crossfill.kinds.evm.hint_watch import DEFAULT_CALLS_PER_CLIENT_PER_MINUTE, Hint, HintWatch
from crossfill.kinds.evm.receiver_logs import decode_receiver_deposit, forwarded_event, is_forwarded
from crossfill.kinds.evm.reorg_watch import ReorgWatch
from crossfill.kinds.evm.router_logs import RouterBatch, decode_batch, multicall_event
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.kinds.evm.same_chain import awaited, settle_batch
from crossfill.kinds.evm.settler_logs import decode_open, open_event
from crossfill.kinds.evm.unconfirmed import UnconfirmedCount
from crossfill.loops import run_forever, wait_interval
from crossfill.metrics import Metrics
from crossfill.store import deposits, requests
from crossfill.store.tables import Deposit, Request

log = structlog.get_logger(__name__)


REWIND_BLOCKS = 64
# Deposits recorded (judged, made pending, claimed) in one database transaction.
RECORDED_TOGETHER = 8
# A cursor further behind the head than this (a restart after an outage, a fresh database
# beside a chain with history) leaves a backlog, caught up beside the live head: each tick
# scans the new head first, then at most `BACKLOG_SLICE_BLOCKS` of the backlog.
BACKLOG_AFTER_BLOCKS = 2 * REWIND_BLOCKS
BACKLOG_SLICE_BLOCKS = 100
# Deposits found deep enough that one pass confirms (one transaction each), the newest first:
# the rest in the next pass, at once, after the newest head's own scan.
CONFIRMED_PER_PASS = 16


class Claim(Protocol):
    """A request claimed for this process's solver of its destination chain inside the
    transaction that makes it pending."""

    async def seal(self, session: AsyncSession, *, alone: bool) -> None:
        """Its last work in that transaction, just before the commit (its fill journalled, when
        `alone`: the only claim there; several go together once it has committed, and the
        transaction waits on none of their simulations)."""

    async def committed(self) -> None:
        """That transaction committed: hand it over (its fill broadcast)."""

    def dropped(self) -> None:
        """That transaction did not commit: nothing was claimed."""


# Claims a request inside the transaction that makes it pending; None when that solver cannot
# take it now (it is then handed over by id, and claimed there).
ClaimHook = Callable[[AsyncSession, Request], Awaitable[Claim | None]]


async def _no_claim(_session: AsyncSession, _request: Request) -> Claim | None:
    return None


# Takes ERC-7683 orders opened on the chain's origin settler as requests, in the caller's
# transaction (`app.erc7683_orders.take_orders`); each order taken once.
OrderHook = Callable[[AsyncSession, list[OpenedOrder]], Awaitable[None]]


async def _no_orders(_session: AsyncSession, _orders: list[OpenedOrder]) -> None:
    return None


class Indexer:
    def __init__(
        self,
        chain: ChainRuntime,
        sessions: async_sessionmaker[AsyncSession],
        *,
        now: Callable[[], datetime],
        interval_seconds: float,
        metrics: Metrics,
        batch_blocks: int = 2_000,
        initial_lookback_blocks: int = 10_000,
        concurrent_transactions: int = 1,
        hint_calls_per_client_per_minute: int = DEFAULT_CALLS_PER_CLIENT_PER_MINUTE,
    ) -> None:
        self.chain = chain
        self.config = chain.config
        self.sessions = sessions
        self.now = now
        self.interval_seconds = interval_seconds
        self.batch_blocks = batch_blocks
        # A block's deposits are recorded in this many transactions at once (on a database
        # with more than one connection: each is mostly round trips to the server).
        self.concurrent_transactions = concurrent_transactions
        self.initial_lookback_blocks = initial_lookback_blocks
        self._wakeup = asyncio.Event()
        self.hints = HintWatch(
            chain.client,
            now=now,
            on_hint=self._wakeup.set,
            calls_per_client_per_minute=hint_calls_per_client_per_minute,
        )
        # Called with a request's destination chain id and id when it becomes pending.
        self.on_pending: Callable[[int, str], None] = lambda _chain_id, _request_id: None
        self.claim_pending: ClaimHook = _no_claim
        # ERC-7683 orders found, taken before the deposits their transactions made are judged.
        self.take_orders: OrderHook = _no_orders
        # Called with each head once its scan is done (its fills sent): workers that follow
        # the same heads go after the fill path, not beside it on the database.
        self.on_scanned: Callable[[BlockHead], None] = lambda _head: None
        # What each open transaction made pending: handed over once it has committed.
        self._handovers: dict[AsyncSession, _Handover] = {}
        # The newest head announced by the chain's follower, not ticked on yet.
        self._announced: BlockHead | None = None
        # Blocks as the last scan's node answered for them, by number; the deposits' txs.
        self._scanned: dict[int, BlockHead] = {}
        self._scanned_txs: set[str] = set()
        self._tokens = {currency.address.lower() for currency in self.config.erc20_currencies}
        self.reorg_watch = ReorgWatch(chain, sessions, now=now)
        # The head whose scan, confirmations and reorg check all completed.
        self._settled_head: str | None = None
        # The cursor as this indexer last read or committed it (its own writes are the only
        # ones in a process; the genesis check, which may delete it, runs before the workers).
        self._cursor: tuple[int, str] | None = None
        # Blocks left behind the live head, still to scan: the next and the last (see
        # `BACKLOG_AFTER_BLOCKS`). While there are, the stored cursor is the backlog's
        # progress, and `_cursor` the live scan's own (a restart scans again from the former).
        self._backlog: tuple[int, int] | None = None
        # The last pass left deposits deep enough to confirm: the next tick confirms more.
        self._confirm_more = False
        # Deposits recorded, not yet confirmed: the confirmation pass runs only when some may be.
        self._unconfirmed = UnconfirmedCount()
        self.judge = DepositJudge(chain, now)
        self._lag = metrics.indexer_lag.labels(self.config.id)

    async def run(self) -> None:
        await run_forever(f"indexer-{self.config.id}", self.tick, self._wait, goes_first=True)

    def new_head(self, head: BlockHead) -> None:
        """The chain has a new head (pushed or polled by its follower): tick on it now, its
        scan ahead of the process's other work (`first_on_loop`)."""
        self._announced = head
        fill_path().hold(self)
        self._wakeup.set()

    async def _wait(self) -> None:
        """Until the next scan, or sooner: a new head, a client's hint."""
        await wait_interval(self._wakeup, self.interval_seconds)

    async def tick(self) -> None:
        head, self._announced = self._announced, None
        try:
            if head is None:
                head = await self.chain.client.head()
            # A hint that found its receipt may have recorded a deposit: confirmed below.
            found = await self._index_hinted(self.hints.new())
            scan = head.hash != self._settled_head or found
            if scan:
                await self._scan(head)
        finally:
            fill_path().release(self)  # its fills broadcast: the rest may go
        if scan:
            self.on_scanned(head)
            await self._confirm(head)
            await self.reorg_watch.check(head)
            self._settled_head = head.hash
        elif self._confirm_more:
            await self._confirm(head)
        # After the scan, which finds every deposit mined by now: only the rest is looked up.
        self.hints.mined(self._scanned_txs)
        await self._index_hinted(self.hints.recheck(head))
        if self._backlog is not None:
            await self._catch_up(head)

    def hint(self, hint: Hint) -> bool:
        """Queue a client's hint; False when its client's budget or the queue is full (the
        scan will find it)."""
        return self.hints.hint(hint)

    async def _index_hinted(self, hints: list[Hint]) -> bool:
        """Receipts of transactions clients told us about: new hints ahead of the scan, and
        after it, at new heads, the hints not mined yet (see `hint_watch`); none of this ever
        stops the scan. Whether any receipt was found."""
        found = False
        for hint in hints:
            try:
                if await self._index_receipt(hint.tx_hash):
                    self.hints.mined([hint.tx_hash])
                    found = True
                else:
                    await self.hints.not_mined(hint)
            except ChainError as exc:
                log.warning(
                    "hinted transaction not indexed yet",
                    chain_id=self.config.id,
                    tx_hash=hint.tx_hash,
                    error=str(exc),
                )
                self.hints.keep(hint)
        return found

    async def _index_receipt(self, tx_hash: str) -> bool:
        """Index what the transaction's receipt holds; False when there is no receipt yet."""
        receipt = await self.chain.client.receipt(tx_hash)
        if receipt is None:
            return False
        depository = self.config.contracts.depository.lower()
        found = [
            deposit
            for entry in receipt["logs"]
            if entry["address"].lower() == depository
            and (deposit := decode_deposit(entry)) is not None
        ]
        transfers = [
            entry
            for entry in receipt["logs"]
            if entry["address"].lower() in self._tokens
            and len(entry["topics"]) == 3
            and to_hex(entry["topics"][0]) == erc20_transfer_event().topic
            and to_hex(entry["topics"][2]) == address_topic(depository)
        ]
        forwarded = [entry for entry in receipt["logs"] if is_forwarded(entry, self._receiver)]
        router = self.config.contracts.router.lower()
        batches = [
            batch
            for entry in receipt["logs"]
            if entry["address"].lower() == router and (batch := decode_batch(entry)) is not None
        ]
        paid = found + await self._implicit(transfers) + await self._forwarded(forwarded)
        settler = self._origin_settler
        opened = [
            order
            for entry in receipt["logs"]
            if settler is not None
            and entry["address"].lower() == settler
            and (order := decode_open(entry)) is not None
        ]
        await self._take_orders(opened)
        await self._record(paid, batches)
        return True

    @property
    def _origin_settler(self) -> str | None:
        settler = self.config.contracts.erc7683_origin_settler
        return None if settler is None else settler.lower()

    async def _take_orders(self, opened: list[OpenedOrder]) -> None:
        """ERC-7683 orders, taken as requests before their deposits are recorded and judged
        (a crash between the two: the scan again finds them taken)."""
        if not opened:
            return
        async with self.sessions() as session, session.begin():
            await self.take_orders(session, opened)

    async def _start_block(self, head: BlockHead) -> tuple[int, str | None]:
        """Where the scan starts, and the hash its first block's parent must have when that is
        left to the scan to prove: with the head one block past the cursor, the scanned block
        itself says whether it follows the cursor (no round trip of its own)."""
        if self._cursor is None:
            async with self.sessions() as session, session.begin():
                row = await deposits.cursor(session, self.config.id)
                start, start_hash = (
                    (head.number, head.hash) if row is None else (row.block_number, row.block_hash)
                )
                self.judge.history_until = await deposits.watch_start(
                    session, self.config.id, head=start, block_hash=start_hash, now=self.now()
                )
            if row is None:
                return max(0, head.number - self.initial_lookback_blocks), None
            self._cursor = (row.block_number, row.block_hash)
        number, block_hash = self._cursor
        if number == head.number and block_hash == head.hash:
            return head.number + 1, None  # scanned already (a hint's tick): nothing to check
        if number + 1 == head.number:
            return head.number, block_hash
        return await self._resume_after(number, block_hash), None

    async def _resume_after(self, number: int, block_hash: str) -> int:
        """After the cursor's block if it is still canonical; else a rewind."""
        canonical = await self.chain.client.block_at(number)
        if canonical is None or canonical.hash != block_hash:
            log.warning("indexer cursor reorged; rewinding", chain_id=self.config.id)
            return max(0, number - REWIND_BLOCKS)
        return number + 1

    @property
    def _receiver(self) -> str:
        return self.config.contracts.receiver.lower()

    def _log_filters(self) -> list[LogFilter]:
        """Depository deposits, token transfers into the Depository, Router batches, ether
        forwarded to the solver by the Receiver (v1 deposits); orders opened on the ERC-7683
        origin settler, where the chain has one."""
        depository = self.config.contracts.depository.lower()
        settler = self._origin_settler
        opened = [] if settler is None else [LogFilter((settler,), (open_event().topic,))]
        return [
            LogFilter((depository,), (deposit_topics(),)),
            LogFilter(
                tuple(sorted(self._tokens)),
                (erc20_transfer_event().topic, None, address_topic(depository)),
            ),
            LogFilter((self.config.contracts.router.lower(),), (multicall_event().topic,)),
            LogFilter((self._receiver,), (forwarded_event().topic,)),
            *opened,
        ]

    async def _scan(self, head: BlockHead) -> None:
        """Up to `head`, a batch of blocks at a time; the cursor moves only past blocks whose
        logs one node answered for together with the batch's last block (see EvmClient.scan,
        which also narrows a batch whose logs the node refuses). A cursor far behind leaves
        the blocks before the head to the backlog (`_catch_up`)."""
        start, parent_hash = await self._start_block(head)
        if self._backlog is None and head.number - start >= BACKLOG_AFTER_BLOCKS:
            self._backlog = (start, head.number - 1)
            log.info(
                "catching up with a backlog beside the head",
                chain_id=self.config.id,
                first_block=start,
                last_block=head.number - 1,
            )
            start, parent_hash = head.number, None
        self._lag.set(head.number - (start - 1))
        filters = self._log_filters()
        self._scanned, self._scanned_txs = {}, set()
        while start <= head.number:
            end = min(head.number, start + self.batch_blocks - 1)
            scanned = await self.chain.client.scan(filters, start, end)
            if parent_hash is not None and scanned.end_block.parent_hash != parent_hash:
                # Not (provably) the cursor's child: check the cursor as a longer gap would.
                start, parent_hash = await self._resume_after(start - 1, parent_hash), None
                continue
            parent_hash = None
            self._scanned[end] = scanned.end_block
            await self._record_scanned(scanned, head, live=True)
            self._lag.set(head.number - end)
            start = end + 1

    async def _catch_up(self, head: BlockHead) -> None:
        """The next slice of the backlog, scanned and recorded as the head's blocks are, the
        stored cursor moved past it; once none is left, to the live scan's cursor. The loop
        comes back at once while some is left, each time after the newest head's own scan."""
        assert self._backlog is not None
        start, last = self._backlog
        end = min(last, start + BACKLOG_SLICE_BLOCKS - 1)
        scanned = await self.chain.client.scan(self._log_filters(), start, end)
        await self._record_scanned(scanned, head, live=False)
        # What it recorded unconfirmed is confirmed at the next tick, which comes at once.
        self._confirm_more = True
        self._wakeup.set()
        if end < last:
            self._backlog = (end + 1, last)
            return
        self._backlog = None
        log.info("backlog caught up", chain_id=self.config.id, last_block=last)
        if self._cursor is not None:
            number, block_hash = self._cursor
            async with self.sessions() as session, session.begin():
                await deposits.advance_cursor(
                    session, self.config.id, number, block_hash, self.now()
                )

    async def _record_scanned(self, scanned: ScannedRange, head: BlockHead, *, live: bool) -> None:
        """A scanned range's deposits and batches recorded, the cursor moved past its last
        block: the stored one unless a backlog is left behind a `live` scan (the backlog's
        progress is stored); the live scan's own when `live`."""
        deposit_logs, transfers, router_logs, forwarded, *open_logs = scanned.logs
        await self._take_orders(
            [order for entries in open_logs for entry in entries if (order := decode_open(entry))]
        )
        if not self._tokens:
            transfers = []  # an empty address list would match every token
        found = [d for entry in deposit_logs if (d := decode_deposit(entry)) is not None]
        found += await self._forwarded(forwarded)
        if live:
            self._scanned_txs.update(deposit.tx_hash for deposit in found)
        batches = [batch for entry in router_logs if (batch := decode_batch(entry)) is not None]
        await self._record(
            found + await self._implicit(transfers),
            batches,
            cursor=scanned.end_block,
            head=head,
            stored=not live or self._backlog is None,
            live=live,
        )

    async def _implicit(self, transfers: list[Any]) -> list[DepositLog]:
        """Tagged token transfers into the Depository (`explicitDeposit: false`)."""
        found = []
        for entry in transfers:
            tx_input, tx_to = await self.chain.client.transaction_input(
                to_hex(entry["transactionHash"])
            )
            deposit = decode_implicit_deposit(entry, tx_input, tx_to)
            if deposit is not None:
                found.append(deposit)
        return found

    async def _forwarded(self, logs: list[Any]) -> list[DepositLog]:
        """Ether the Receiver forwarded to the solver with an order id (v1 deposits); the
        amount and the depositor are the transaction's own."""
        found = []
        for entry in logs:
            tx = await self.chain.client.sent_transaction(to_hex(entry["transactionHash"]))
            if tx is None:
                continue
            deposit = decode_receiver_deposit(entry, tx, self._receiver)
            if deposit is not None:
                found.append(deposit)
        return found

    async def _record(
        self,
        found: list[DepositLog],
        batches: list[RouterBatch],
        cursor: BlockHead | None = None,
        head: BlockHead | None = None,
        *,
        stored: bool = True,
        live: bool = True,
    ) -> None:
        """Deposits and batches recorded; with a scanned range's last block (`cursor`), the
        cursor moved past it: the stored one when `stored`, this scan's own when `live`."""
        if batches:
            async with self.sessions() as session:
                batches = await awaited(session, batches, chain_id=self.config.id)
        blocks = {
            number: await self.chain.client.block_at(number)
            for number in {batch.block_number for batch in batches}
        }
        deep = self._found_deep(found, cursor, head)
        now = self.now()
        # A few deposits a transaction, each handed over as it commits: the first fills of a
        # block of hundreds go while the rest are recorded, and the database (SQLite's one
        # writer) serves others between them. Each deposit is recorded and judged in one of
        # them (a re-scan after a crash skips those recorded); the cursor moves in the last.
        chunks = [
            found[start : start + RECORDED_TOGETHER]
            for start in range(0, len(found), RECORDED_TOGETHER)
        ] or [[]]
        unconfirmed = 0
        at_once = asyncio.Semaphore(self.concurrent_transactions)

        async def record(chunk: list[DepositLog]) -> int:
            async with at_once:
                return await self._record_in_transaction(
                    chunk, [], blocks, deep, now, cursor, advance=False
                )

        try:
            # All but the last at once (as many as allowed), the last after them: the cursor
            # moves in it, past every deposit recorded.
            results = await asyncio.gather(
                *(record(chunk) for chunk in chunks[:-1]), return_exceptions=True
            )
            unconfirmed += sum(count for count in results if isinstance(count, int))
            for failed in results:
                if isinstance(failed, BaseException):
                    raise failed
            unconfirmed += await self._record_in_transaction(
                chunks[-1], batches, blocks, deep, now, cursor, advance=stored
            )
        finally:
            _consume([] if deep.fees is None else [deep.fees])
            self._unconfirmed.recorded(unconfirmed)
        if cursor is not None and live:
            self._cursor = (cursor.number, cursor.hash)  # committed, or kept here (a backlog)

    async def _record_in_transaction(
        self,
        found: list[DepositLog],
        batches: list[RouterBatch],
        blocks: dict[int, BlockHead | None],
        deep: _Deep,
        now: datetime,
        cursor: BlockHead | None,
        *,
        advance: bool,
    ) -> int:
        """Records them in one transaction, the cursor moved to `cursor` there when
        `advance`; how many it recorded unconfirmed."""
        unconfirmed = 0
        async with self._transaction() as session:
            stored, reads = await self._read_chunk(session, found)
            for deposit in found:
                confirmed = deposit in deep.deposits and cursor is not None
                state = deposits.CONFIRMED if confirmed else deposits.SEEN
                unstored = reads is not None and (deposit.tx_hash, deposit.log_index) not in stored
                row = await deposits.record_seen(
                    session, self.config.id, deposit, now, state=state, unstored=unstored
                )
                if row is None:
                    continue
                unconfirmed += row.state == deposits.SEEN
                chunk_reads = reads if unstored else None
                # Its reads see nothing of its own writes (their rows are read before them,
                # or unrelated to them), and all came flushed before (the check of the next
                # deposit, or any of the claim's, flushes them): written together, not one
                # statement each. Read for the whole chunk at once, nothing is flushed
                # before the claims are sealed: the chunk's rows go in a statement a table.
                with session.no_autoflush:
                    read = await self.judge.note_seen(session, deposit, now, chunk_reads)
                    if confirmed and cursor is not None:
                        fee = await deep.fee(deposit)
                        pending = await self.judge.settle(
                            session, row, cursor, fee, read, chunk_reads
                        )
                        await self._claim_pending(session, pending)
            for batch in batches:
                block = blocks[batch.block_number]
                await settle_batch(
                    session,
                    batch,
                    chain_id=self.config.id,
                    now=now,
                    block_timestamp=block.timestamp if block else None,
                )
            if cursor is not None and advance:
                await deposits.advance_cursor(
                    session, self.config.id, cursor.number, cursor.hash, now
                )
        return unconfirmed

    async def _read_chunk(
        self, session: AsyncSession, found: list[DepositLog]
    ) -> tuple[set[tuple[str, int]], ChunkReads | None]:
        """What recording `found` reads, read for all of them at once: which are stored already,
        and for the rest, what judging them reads (`deposit_judge.read_chunk`). None for the
        latter when two deposits pay one order (the second is judged after the first's
        verdict, each read on its own)."""
        orders = {deposit.order_id for deposit in found}
        if len(found) < 2 or len(orders) < len(found):
            return set(), None
        stored = await deposits.stored_logs(session, self.config.id, found)
        return stored, await read_chunk(session, orders)

    def _found_deep(
        self, found: list[DepositLog], cursor: BlockHead | None, head: BlockHead | None
    ) -> _Deep:
        """Deposits a scan found already as deep as their value calls for, in the block the
        scan answered for (its last, so the block is known canonical with them in it), with
        their fees on the way (read from their receipts, all in one batch, beside the
        transactions that record them, in which they are confirmed; the fee is needed only
        when they are)."""
        if cursor is None or head is None:
            return _Deep([], None)
        deep = [
            deposit
            for deposit in found
            if deposit.block_number == cursor.number
            and deposit.block_hash == cursor.hash
            and self._deep_enough(deposit.currency, deposit.amount, deposit.block_number, head)
        ]
        hashes = list(dict.fromkeys(deposit.tx_hash for deposit in deep))
        fees = asyncio.create_task(self.chain.client.fees_paid(hashes)) if deep else None
        return _Deep(deep, fees, hashes)

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[AsyncSession]:
        """A transaction; its claims are sealed in it last, and the requests it makes pending
        are handed over once it commits."""
        handover = _Handover()
        try:
            async with self.sessions() as session, session.begin():
                self._handovers[session] = handover
                try:
                    yield session
                    if handover.claimed:
                        # The writes deferred so far fail here, if they do: before any fill
                        # is signed, and undoing the transaction with its claims.
                        await session.flush()
                    alone = len(handover.claimed) == 1
                    for claim in handover.claimed:
                        await claim.seal(session, alone=alone)
                finally:
                    del self._handovers[session]
        except BaseException:
            await self._hand_over(handover, committed=False)
            raise
        await self._hand_over(handover, committed=True)

    async def _hand_over(self, handover: _Handover, *, committed: bool) -> None:
        """To this process's solvers. Claims made in a transaction that did not commit are
        dropped (no lease was taken); a request handed by id is claimed by its solver, which
        finds it pending or not."""
        pending, claimed = handover.pending, handover.claimed
        for claim in claimed:
            try:
                if committed:
                    await claim.committed()
                else:
                    claim.dropped()
            except Exception:
                log.exception("claim not handed over", chain_id=self.config.id)
        for chain_id, request_id in pending:
            self.on_pending(chain_id, request_id)

    def _deep_enough(self, currency: str, amount: int, block_number: int, head: BlockHead) -> bool:
        """As many confirmations at `head` as the deposit's value calls for (valued at the
        price quotes use; without one, the deepest tier)."""
        value = self.judge.paid_in(currency, amount).usd_micros
        return deep_enough(
            self.config.confirmations, value, head=head.number, block_number=block_number
        )

    async def _confirm(self, head: BlockHead) -> None:
        if not self._unconfirmed.pass_due():
            return
        self._unconfirmed.passing()
        async with self.sessions() as session:
            unconfirmed = await deposits.unconfirmed(session, self.config.id)
        ready = [
            d
            for d in reversed(unconfirmed)  # the newest first: never behind a backlog
            if self._deep_enough(d.currency, int(d.amount), d.block_number, head)
        ]
        ready, rest = ready[:CONFIRMED_PER_PASS], ready[CONFIRMED_PER_PASS:]
        self._confirm_more = bool(rest)
        if rest:
            self._wakeup.set()
        for deposit in ready:
            block, fee = await asyncio.gather(
                self._block(deposit.block_number), self.chain.client.fee_paid(deposit.tx_hash)
            )
            async with self._transaction() as session:
                # Locked and read afresh: judged once, though another process (or this one's
                # hint) may have judged it since it was listed.
                row = await session.get(
                    Deposit, deposit.id, with_for_update=True, populate_existing=True
                )
                if row is None or row.state != deposits.SEEN:
                    continue
                if block is None or block.hash != row.block_hash:
                    await self._reorged(session, row)
                    continue
                row.state = deposits.CONFIRMED
                pending = await self.judge.settle(session, row, block, fee)
                await self._claim_pending(session, pending)
        self._unconfirmed.left(len(unconfirmed) - len(ready))

    async def _block(self, number: int) -> BlockHead | None:
        """The block as this tick's scan saw it, or as the node has it now."""
        scanned = self._scanned.get(number)
        return scanned if scanned is not None else await self.chain.client.block_at(number)

    async def _reorged(self, session: AsyncSession, deposit: Deposit) -> None:
        """Gone before it was final: never paid for; its request keeps waiting for a deposit."""
        deposit.state = deposits.REORGED
        log.warning("deposit reorged out before confirmation", tx_hash=deposit.tx_hash)
        request = await requests.by_order_id(session, deposit.order_id)
        if request is None:
            return
        forgotten = await requests.forget_transaction(
            session, request.id, kind="deposit", tx_hash=deposit.tx_hash
        )
        if forgotten and request.status == RequestStatus.WAITING:
            request.updated_at = self.now()
            await requests.publish(session, request, now=self.now())

    async def _claim_pending(self, session: AsyncSession, pending: Request | None) -> None:
        """A request a confirmed deposit made pending (`deposit_judge`), if any: claimed for
        this process's solver, or handed over by id once the transaction commits."""
        if pending is None:
            return
        handover = self._handovers[session]
        hand_over = await self.claim_pending(session, pending)
        if hand_over is None:
            handover.pending.append((pending.destination_chain_id, pending.id))
        else:
            handover.claimed.append(hand_over)


@dataclass
class _Deep:
    """Deposits found deep enough, and their transactions' fees being read (in `hashes`'
    order)."""

    found: list[DepositLog]
    fees: asyncio.Task[list[int | None]] | None
    hashes: list[str] = field(default_factory=list)  # a block's at most: a few hundred
    deposits: frozenset[DepositLog] = field(init=False)

    def __post_init__(self) -> None:
        self.deposits = frozenset(self.found)

    async def fee(self, deposit: DepositLog) -> int | None:
        """Its fee, once read (shielded: one waiter's cancellation stops no other's read)."""
        assert self.fees is not None
        fees = await asyncio.shield(self.fees)
        return fees[self.hashes.index(deposit.tx_hash)]


@dataclass
class _Handover:
    """What one transaction made pending: by id, or claimed for a solver in it."""

    pending: list[tuple[int, str]] = field(default_factory=list)
    claimed: list[Claim] = field(default_factory=list)


def _consume(tasks: Iterable[asyncio.Task[Any]]) -> None:
    """Reads done with, or nobody awaits any more (their transaction failed, their deposit
    recorded before): stopped if still running, their outcome taken."""
    for task in tasks:
        if not task.done():
            task.cancel()
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
