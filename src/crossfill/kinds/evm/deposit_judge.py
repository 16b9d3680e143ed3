"""Judging a confirmed EVM deposit, and carrying the verdict out on its request.

The rules are pure (`domain.deposit_checks`): the deposit's terms, then its place (whether it
decides its request). Here they are applied in the indexer's transaction: the deposit's row
records its verdict and place (`store.deposits.place`), the request it decides moves to
`pending` or `failure` with its deposit transaction recorded, and a stray leaves the request
as it was. The caller holds the request's row lock (`requests.by_order_id(..., lock=True)`)
and the deposit's, so a deposit is judged once, whoever else is judging.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.app.refunds import refund_gas_cost
from crossfill.domain import books
from crossfill.domain.deposit_checks import (
    DepositFacts,
    DepositVerdict,
    ExpectedDeposit,
    judge_deposit,
)
from crossfill.domain.deposit_log import DEPOSITORY
from crossfill.domain.enums import features_mask
from crossfill.domain.record_facts import Moved
from crossfill.domain.status import AWAITING_DEPOSIT, RequestStatus
from crossfill.kinds.evm.client import BlockHead
from crossfill.kinds.evm.depository_logs import DepositLog
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.quoting.prices import value_on_chain
from crossfill.store import books as ledger
from crossfill.store import deposits, requests
from crossfill.store.db import as_utc
from crossfill.store.tables import Deposit, Request, RequestTransaction

log = structlog.get_logger(__name__)

DEPOSIT_ADDRESS_MISMATCH = "DEPOSIT_ADDRESS_MISMATCH"
_FAST_FILL = features_mask(["fast_fill"])


@dataclass
class SeenRequest:
    """A deposit's request as read in the transaction that records the deposit (None: an
    orphan), and the request's transactions when they were read there too (kept current by
    `requests.record_transaction(..., known=...)`, so its two events read them once)."""

    request: Request | None
    transactions: list[RequestTransaction] | None = None


@dataclass(frozen=True)
class ChunkReads:
    """What judging new deposits of distinct orders reads, read for all of them at once in
    the transaction that records them (`read_chunk`): their requests by order id (locked),
    those requests' transactions and the verdicts of their deposits stored before."""

    requests: dict[str, Request]
    transactions: dict[str, list[RequestTransaction]]
    verdicts: dict[str, set[str]]

    def seen(self, order_id: str) -> SeenRequest:
        request = self.requests.get(order_id)
        return SeenRequest(request, None if request is None else self.transactions[request.id])


async def read_chunk(session: AsyncSession, order_ids: Collection[str]) -> ChunkReads:
    """`ChunkReads` for deposits of these orders, each order's one only, none stored yet."""
    found = await requests.by_order_ids(session, order_ids, lock=True)
    ids = [request.id for request in found.values()]
    return ChunkReads(
        found,
        await requests.transactions_of_each(session, ids),
        await deposits.verdicts_of(session, ids),
    )


@dataclass
class DepositJudge:
    chain: ChainRuntime
    now: Callable[[], datetime]
    # Unknown orders' deposits up to this block are history (`deposits.WATCH_START`); None
    # until the indexer read it, when every one is.
    history_until: int | None = None

    async def note_seen(
        self,
        session: AsyncSession,
        deposit: DepositLog,
        now: datetime,
        reads: ChunkReads | None = None,
    ) -> SeenRequest:
        """The user's deposit is on chain but not final: show its hash, still `waiting`.
        Returns its request as read here, its row locked (a judge may follow); from `reads`
        when they were read for it."""
        if reads is not None:
            read = reads.seen(deposit.order_id)
            request, known = read.request, read.transactions
            if request is None or known is None or request.status != RequestStatus.WAITING:
                return read
        else:
            request = await requests.by_order_id(session, deposit.order_id, lock=True)
            if request is None or request.status != RequestStatus.WAITING:
                return SeenRequest(request)
            known = await requests.transactions_of(session, request.id)
        await self._shown(
            session, request, deposit, "pending", now=now, block_number=deposit.block_number,
            known=known,
        )  # fmt: skip
        await requests.publish(session, request, now=now, transactions=known)
        return SeenRequest(request, known)

    async def _shown(
        self,
        session: AsyncSession,
        request: Request,
        deposit: DepositLog | Deposit,
        status: str,
        *,
        now: datetime,
        block_number: int,
        known: list[RequestTransaction],
        fee: int | None = None,
        timestamp: int | None = None,
    ) -> None:
        """The deposit on its request's record, as `status`, with what it paid in."""
        await requests.record_transaction(
            session,
            request.id,
            kind="deposit",
            chain_id=self.chain.config.id,
            tx_hash=deposit.tx_hash,
            status=status,
            now=now,
            block_number=block_number,
            fee=fee,
            timestamp=timestamp,
            moved=self.paid_in(deposit.currency, int(deposit.amount)),
            sender=deposit.depositor,
            known=known,
        )

    async def _booked(
        self, session: AsyncSession, deposit: Deposit, logged: int, now: datetime, *, fresh: bool
    ) -> None:
        """The deposit in the books: held by the Depository (a v1 deposit: by the solver key it
        was forwarded to), owed to its user (`fresh`: stored in this transaction)."""
        holder = (
            books.DEPOSITORY
            if deposit.paid_to == DEPOSITORY
            else books.key_account(self.chain.follower.solver)
        )
        await ledger.deposited(session, deposit, logged, holder, now=now, fresh=fresh)

    def paid_in(self, currency: str, amount: int) -> Moved:
        """What a deposit paid in, as its log says, valued at the prices quotes use."""
        now_seconds = int(self.now().timestamp())
        usd = value_on_chain(self.chain.config, self.chain.state, currency, amount, now_seconds)
        return Moved(currency, amount, usd)

    async def settle(
        self,
        session: AsyncSession,
        deposit: Deposit,
        block: BlockHead,
        fee: int | None,
        read: SeenRequest | None = None,
        reads: ChunkReads | None = None,
    ) -> Request | None:
        """Judge a confirmed deposit against its request (`read` when read already, and locked,
        in this transaction) and carry the verdict out; the request it made pending, if any.
        `reads`: read for it, stored in this transaction (`read_chunk`)."""
        now = self.now()
        if read is None:
            read = SeenRequest(await requests.by_order_id(session, deposit.order_id, lock=True))
        request = read.request
        logged = int(deposit.amount)  # all of it, before an excess is split off
        verdict = judge_deposit(
            DepositFacts(
                self.chain.config.id, deposit.currency, int(deposit.amount), block.timestamp
            ),
            _expected(request),
        )
        judgement = await deposits.place(
            session,
            deposit,
            request,
            verdict,
            refund_cost=refund_gas_cost(self.chain, deposit.currency, now=now),
            verdicts=None if reads is None or request is None else reads.verdicts[request.id],
        )
        log.info(
            "deposit confirmed",
            chain_id=self.chain.config.id,
            tx_hash=deposit.tx_hash,
            verdict=str(judgement.verdict),
            decides=judgement.decides,
            excess=judgement.excess,
        )
        if request is None:
            if self.history_until is None or deposit.block_number <= self.history_until:
                # From before this database watched the chain: perhaps another deployment's
                # order, filled; kept and reported, never paid out blindly.
                deposit.refund_status = deposits.SKIPPED
                deposit.refund_fail_reason = deposits.BEFORE_WATCH_START
                return None  # on chain before the books were opened: in their opening
            await self._booked(session, deposit, logged, now, fresh=reads is not None)
            return None  # else an unknown order's: refunded to its depositor
        await self._booked(session, deposit, logged, now, fresh=reads is not None)
        if not judgement.decides:
            # A stray, refunded to its depositor: the request goes on undisturbed, without the
            # deposit its record showed while the stray was only seen.
            await _forget_seen(session, read, deposit.tx_hash, now=now)
            return None
        known = read.transactions
        if known is None:
            known = await requests.transactions_of(session, request.id)
        await self._shown(
            session, request, deposit, "success", now=now, block_number=block.number,
            known=known, fee=fee, timestamp=block.timestamp,
        )  # fmt: skip
        if RequestStatus(request.status) not in AWAITING_DEPOSIT:
            # Failed before any deposit came (a deposit address's, a gasless call that paid
            # nothing): this one is refunded as its own. Or filled already on this deposit seen
            # earlier (a fast fill).
            return None
        request.origin_block_number = block.number
        if judgement.verdict is DepositVerdict.ACCEPTED:
            await requests.move(
                session, request, RequestStatus.PENDING, now=now, transactions=known
            )
            return request
        else:
            await requests.move(
                session,
                request,
                RequestStatus.FAILURE,
                now=now,
                fail_reason=_reason(request, judgement.verdict),
                transactions=known,
            )
        return None


def _expected(request: Request | None) -> ExpectedDeposit | None:
    """A request's terms for its deposit. One filled early on its deposit seen (a fast fill) no
    longer expires: that deposit is what it was filled for."""
    if request is None:
        return None
    filled_early = request.features_mask & _FAST_FILL == _FAST_FILL and (
        RequestStatus(request.status) not in AWAITING_DEPOSIT
    )
    return ExpectedDeposit(
        origin_chain_id=request.origin_chain_id,
        currency=request.origin_currency,
        amount=int(request.amount_in),
        expires_at=2**63 if filled_early else int(as_utc(request.expires_at).timestamp()),
    )


async def _forget_seen(
    session: AsyncSession, read: SeenRequest, tx_hash: str, *, now: datetime
) -> None:
    """Drop a deposit shown as pending on the request (read with its transactions, or not),
    and tell its watchers."""
    request = read.request
    if request is None or request.status != RequestStatus.WAITING:
        return
    known = read.transactions
    if known is None:
        known = await requests.transactions_of(session, request.id)
    shown = [
        tx
        for tx in known
        if tx.kind == "deposit" and tx.tx_hash == tx_hash and tx.status == "pending"
    ]
    if not shown:
        return
    for tx in shown:
        known.remove(tx)
        if tx in session.new:
            session.expunge(tx)  # recorded in this very transaction, not written yet
        else:
            await session.delete(tx)
    request.updated_at = now
    await requests.publish(session, request, now=now, transactions=known)


def _reason(request: Request, verdict: DepositVerdict) -> str:
    """A deposit address paid in another currency than quoted: DEPOSIT_ADDRESS_MISMATCH."""
    if request.deposit_address is not None and verdict is DepositVerdict.WRONG_CURRENCY:
        return DEPOSIT_ADDRESS_MISMATCH
    return verdict
