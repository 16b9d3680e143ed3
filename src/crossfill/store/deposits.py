"""Repository of observed deposits and the indexer's cursor. The caller owns the transaction."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, delete, exists, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.deposit_checks import DepositVerdict, Judgement, Standing, judge
from crossfill.domain.deposit_log import DepositLog
from crossfill.domain.enums import features_mask
from crossfill.domain.record_facts import Moved
from crossfill.domain.status import AWAITING_DEPOSIT, RequestStatus
from crossfill.store import requests
from crossfill.store.requests import publish
from crossfill.store.tables import ChainCursor, Deposit, Repayment, Request

SEEN = "seen"
CONFIRMED = "confirmed"
REORGED = "reorged"
INDEXER = "indexer"
# The head when this database first watched the chain: unknown orders' deposits up to it are
# history (perhaps another deployment's filled orders), kept and reported, never refunded.
WATCH_START = "watch_start"
# `Deposit.part`: the deposit as its chain logged it; what an accepted one paid above its quote.
WHOLE = 0
EXCESS = 1
SKIPPED = "skipped"
# Why a deposit's refund was skipped (`Deposit.refund_fail_reason`): its gas would eat it; a
# token the chain does not serve (no price to net the gas from, nothing to pay it from); the
# chain refused the payment for good.
TOO_SMALL_TO_RETURN = "AMOUNT_TOO_LOW_TO_REFUND"
UNSERVED_CURRENCY = "UNSERVED_CURRENCY"
REFUND_REFUSED = "REFUND_REFUSED"
BEFORE_WATCH_START = "DEPOSITED_BEFORE_WATCH_START"
_FAST_FILL = features_mask(["fast_fill"])
# A request takes the first deposit that reaches it in these statuses (failed: before any
# deposit came, the deposit is refunded as its own).
_TAKES_A_DEPOSIT = (RequestStatus.WAITING, RequestStatus.DEPOSITING, RequestStatus.FAILURE)


async def stored_logs(
    session: AsyncSession, chain_id: int, logs: Collection[DepositLog]
) -> set[tuple[str, int]]:
    """Which of `logs` are stored already (as `(tx_hash, log_index)`), in one query."""
    if not logs:
        return set()
    rows = await session.execute(
        select(Deposit.tx_hash, Deposit.log_index).where(
            Deposit.chain_id == chain_id,
            Deposit.tx_hash.in_({log.tx_hash for log in logs}),
            Deposit.part == WHOLE,
        )
    )
    return {(tx_hash, log_index) for tx_hash, log_index in rows}


async def record_seen(
    session: AsyncSession,
    chain_id: int,
    log: DepositLog,
    now: datetime,
    *,
    state: str = SEEN,
    unstored: bool = False,
) -> Deposit | None:
    """Store a deposit log once: its row when that is news (new, or revived after a reorg);
    None when it was already known (a re-scan or a hint). `state` is CONFIRMED for one found
    already deep enough (written so at once, not seen and then updated). `unstored`: the
    caller found it not stored in this transaction (`stored_logs`): not looked up again."""
    known = None
    if not unstored:
        known = await session.scalar(
            select(Deposit.id).where(
                Deposit.chain_id == chain_id,
                Deposit.tx_hash == log.tx_hash,
                Deposit.log_index == log.log_index,
                Deposit.part == WHOLE,
            )
        )
    if known is not None:
        return await _seen_again(session, known, log, state)
    row = Deposit(
        chain_id=chain_id,
        part=WHOLE,
        **_logged(log),
        amount=str(log.amount),
        state=state,
        created_at=now,
    )
    session.add(row)  # written with the session's next flush (its next statement, or commit)
    return row


def _logged(source: DepositLog | Deposit) -> dict[str, object]:
    """The columns every part of a deposit keeps of its log: from the log itself, or from
    another part's row."""
    return {
        "tx_hash": source.tx_hash,
        "log_index": source.log_index,
        "block_number": source.block_number,
        "block_hash": source.block_hash,
        "order_id": source.order_id,
        "depositor": source.depositor,
        "currency": source.currency,
        "paid_to": source.paid_to,
    }


async def _seen_again(
    session: AsyncSession, deposit_id: int, log: DepositLog, state: str
) -> Deposit | None:
    """A known deposit log found again. In another block it was re-included after a reorg:
    follow it there, and revive it if it had been given up as reorged (its row: news, to be
    judged afresh)."""
    deposit = await session.get(Deposit, deposit_id)
    assert deposit is not None
    if deposit.block_hash == log.block_hash:
        return None
    deposit.block_number = log.block_number
    deposit.block_hash = log.block_hash
    if deposit.state != REORGED:
        return None
    deposit.state = state
    await _unjudge(session, deposit)
    return deposit


async def _unjudge(session: AsyncSession, deposit: Deposit) -> None:
    """A revived deposit is judged again: its verdict and place are cleared, and an excess
    split off it whose return has not started is folded back (one that has is left to end)."""
    deposit.outcome = None
    deposit.request_id = None
    excess = await session.scalar(
        select(Deposit).where(
            Deposit.chain_id == deposit.chain_id,
            Deposit.tx_hash == deposit.tx_hash,
            Deposit.log_index == deposit.log_index,
            Deposit.part == EXCESS,
        )
    )
    if excess is not None and excess.refund_status is None:
        deposit.amount = str(int(deposit.amount) + int(excess.amount))
        await session.execute(delete(Deposit).where(Deposit.id == excess.id))


async def unconfirmed(session: AsyncSession, chain_id: int) -> list[Deposit]:
    rows = await session.scalars(
        select(Deposit)
        .where(Deposit.chain_id == chain_id, Deposit.state == SEEN)
        .order_by(Deposit.block_number, Deposit.log_index)
    )
    return list(rows)


async def confirmed_since(session: AsyncSession, chain_id: int, block_number: int) -> list[Deposit]:
    """Confirmed deposits in blocks after `block_number` (not yet final), newest first."""
    rows = await session.scalars(
        select(Deposit)
        .where(
            Deposit.chain_id == chain_id,
            Deposit.state == CONFIRMED,
            Deposit.block_number > block_number,
        )
        .order_by(Deposit.block_number.desc(), Deposit.log_index.desc())
    )
    return list(rows)


# Confirmed deposits that pay for nothing (refused, strays, excesses, or accepted for a
# request that failed) and whose return has not started, nor their repayment to the solver
# (with `Request` outer-joined).
_DUE_FOR_REFUND = (
    Deposit.state == CONFIRMED,
    Deposit.refund_status.is_(None),
    or_(Deposit.outcome != DepositVerdict.ACCEPTED, Request.status == RequestStatus.FAILURE),
    ~exists().where(Repayment.deposit_id == Deposit.id),
)


async def due_for_refund(session: AsyncSession, chain_id: int) -> list[Deposit]:
    """The chain's deposits due for refund, oldest first."""
    return list(
        await session.scalars(
            select(Deposit)
            .outerjoin(Request, Request.id == Deposit.request_id)
            .where(Deposit.chain_id == chain_id, *_DUE_FOR_REFUND)
            .order_by(Deposit.id)
        )
    )


async def refunds_due_counts(session: AsyncSession) -> dict[int, int]:
    """How many deposits are due for refund, by chain (chains with none left out)."""
    rows = await session.execute(
        select(Deposit.chain_id, func.count())
        .outerjoin(Request, Request.id == Deposit.request_id)
        .where(*_DUE_FOR_REFUND)
        .group_by(Deposit.chain_id)
    )
    return {int(chain_id): int(count) for chain_id, count in rows}


async def accepted_for(session: AsyncSession, request_id: str) -> Deposit | None:
    """The deposit that paid for the request, while it stands in the chain."""
    return await session.scalar(
        select(Deposit).where(
            Deposit.request_id == request_id,
            Deposit.outcome == DepositVerdict.ACCEPTED,
            Deposit.part == WHOLE,
            Deposit.state != REORGED,
        )
    )


async def keep(session: AsyncSession, deposit_id: int, reason: str, *, now: datetime) -> Deposit:
    """Its refund skipped, kept with the reason, which the request it decided shows too."""
    deposit = await session.get(Deposit, deposit_id)
    assert deposit is not None
    deposit.refund_status = SKIPPED
    deposit.refund_fail_reason = reason
    if decides(deposit):
        request = await session.get(Request, deposit.request_id)
        if request is not None:
            request.refund_fail_reason = reason
            request.updated_at = now
            await publish(session, request, now=now)
    return deposit


def decides(deposit: Deposit) -> bool:
    """Whether the deposit is its request's own (it pays for it, or failed it, and is refunded
    to its `refundTo`); else a stray or an excess, returned without touching the request."""
    return (
        deposit.request_id is not None
        and deposit.part == WHOLE
        and deposit.outcome != DepositVerdict.DOUBLE_SPEND  # a stray before strays had no request
    )


def _deciding(request_ids: Collection[str]) -> Select[str | None, str | None]:
    """The verdicts of the deposits, still in the chain, that decided (or paid for) these
    requests, with their requests."""
    return select(Deposit.request_id, Deposit.outcome).where(
        Deposit.request_id.in_(request_ids),
        Deposit.part == WHOLE,
        Deposit.state != REORGED,
        Deposit.outcome.is_not(None),
        Deposit.outcome != DepositVerdict.DOUBLE_SPEND,
    )


async def verdicts_of(session: AsyncSession, request_ids: Collection[str]) -> dict[str, set[str]]:
    """For `standing_of` (`verdicts`), many requests' stored verdicts in one query: those of
    each request's deposits that decided it (an empty set for one without)."""
    found: dict[str, set[str]] = {request_id: set() for request_id in request_ids}
    if found:
        for request_id, outcome in await session.execute(_deciding(found)):
            if request_id is not None and outcome is not None:
                found[request_id].add(outcome)
    return found


async def standing_of(
    session: AsyncSession,
    request: Request,
    deposit: Deposit,
    verdicts: set[str] | None = None,
) -> Standing:
    """Where `request` stands for `deposit`: whether another deposit, still in the chain,
    already decided or paid for it. The caller holds the request's row lock (PostgreSQL; SQLite
    has one writer), so two judges of one request's deposits go one after the other.
    `verdicts`: read in this transaction by `verdicts_of`, before `deposit` was stored (which
    has none yet) and before any other deposit of the request was judged in it."""
    if verdicts is None:
        verdicts = set(
            await session.scalars(
                _deciding([request.id])
                .with_only_columns(Deposit.outcome)
                .where(Deposit.id != deposit.id)
            )
        )
    filled_early = request.features_mask & _FAST_FILL == _FAST_FILL
    takes_one = RequestStatus(request.status) in _TAKES_A_DEPOSIT or filled_early
    return Standing(paid=DepositVerdict.ACCEPTED in verdicts, open=not verdicts and takes_one)


async def place(
    session: AsyncSession,
    deposit: Deposit,
    request: Request | None,
    verdict: DepositVerdict,
    *,
    refund_cost: int | None,
    verdicts: set[str] | None = None,
) -> Judgement:
    """Judge `deposit` (its terms' `verdict` given) for its place and record it: its verdict,
    its request when it decides it, and its excess split off as a part of its own.
    `verdicts`: as `standing_of`'s."""
    standing = None if request is None else await standing_of(session, request, deposit, verdicts)
    judgement = judge(
        verdict,
        amount=int(deposit.amount),
        quoted=int(request.amount_in) if request is not None else 0,
        standing=standing,
        refund_cost=refund_cost,
    )
    deposit.outcome = judgement.verdict
    deposit.request_id = request.id if request is not None and judgement.decides else None
    if judgement.excess > 0 and request is not None:
        _split_excess(session, deposit, judgement.excess, request.id)
    return judgement


@dataclass(frozen=True)
class ShownDeposit:
    """A deposit's transaction as the request it decides shows it."""

    chain_id: int
    tx_hash: str
    block_number: int
    timestamp: int | None
    sender: str | None = None
    # The origin's block the request records, on a chain with blocks (the exchange has none).
    origin_block: int | None = None
    # What the transaction paid in fees, and what it paid in.
    fee: int | None = None
    moved: Moved | None = None


async def carry_out(
    session: AsyncSession,
    request: Request | None,
    judgement: Judgement,
    shown: ShownDeposit,
    *,
    now: datetime,
) -> None:
    """What a deposit recorded and judged (`place`) does to `request` (read locked): nothing
    unless it decides it (else it is refunded to its sender, and the request, if any, goes on
    undisturbed); then the request shows it, and one still awaiting its deposit moves to
    `pending` when it is accepted, else fails with the verdict (one failed before any deposit
    came goes on as it is: this deposit is refunded as its own)."""
    if request is None or not judgement.decides:
        return
    await requests.record_transaction(
        session, request.id, kind="deposit", chain_id=shown.chain_id, tx_hash=shown.tx_hash,
        status="success", now=now, block_number=shown.block_number, timestamp=shown.timestamp,
        sender=shown.sender, fee=shown.fee, moved=shown.moved,
    )  # fmt: skip
    if RequestStatus(request.status) not in AWAITING_DEPOSIT:
        return
    if shown.origin_block is not None:
        request.origin_block_number = shown.origin_block
    if judgement.verdict is DepositVerdict.ACCEPTED:
        await requests.move(session, request, RequestStatus.PENDING, now=now)
    else:
        await requests.move(
            session, request, RequestStatus.FAILURE, now=now, fail_reason=judgement.verdict
        )


def _split_excess(session: AsyncSession, deposit: Deposit, excess: int, request_id: str) -> None:
    """What an accepted deposit paid above its quote becomes a part of its own, returned to the
    request's `refundTo`; the deposit keeps what its request is paid with."""
    deposit.amount = str(int(deposit.amount) - excess)
    session.add(
        Deposit(
            chain_id=deposit.chain_id,
            part=EXCESS,
            **_logged(deposit),
            amount=str(excess),
            state=deposit.state,
            request_id=request_id,
            outcome=DepositVerdict.EXCESS,
            created_at=deposit.created_at,
        )
    )


async def kept(session: AsyncSession, *, limit: int = 1000) -> list[Deposit]:
    """Deposits whose refund was skipped (kept, with the reason), newest first."""
    return list(
        await session.scalars(
            select(Deposit)
            .where(Deposit.refund_status == SKIPPED)
            .order_by(Deposit.id.desc())
            .limit(limit)
        )
    )


async def kept_counts(session: AsyncSession) -> dict[tuple[int, str], int]:
    """How many deposits each chain keeps, by the reason they were not refunded."""
    rows = await session.execute(
        select(Deposit.chain_id, Deposit.refund_fail_reason, func.count())
        .where(Deposit.refund_status == SKIPPED)
        .group_by(Deposit.chain_id, Deposit.refund_fail_reason)
    )
    return {(chain_id, reason or TOO_SMALL_TO_RETURN): count for chain_id, reason, count in rows}


async def cursor(session: AsyncSession, chain_id: int) -> ChainCursor | None:
    return await session.get(ChainCursor, (chain_id, INDEXER))


async def watch_start(
    session: AsyncSession, chain_id: int, *, head: int, block_hash: str, now: datetime
) -> int:
    """The block up to which the chain's deposits are history to this database: recorded the
    first time it is asked, as `head` (the indexer's cursor, or the chain's head on a first
    start)."""
    row = await session.get(ChainCursor, (chain_id, WATCH_START))
    if row is not None:
        return row.block_number
    session.add(
        ChainCursor(
            chain_id=chain_id,
            role=WATCH_START,
            block_number=head,
            block_hash=block_hash,
            updated_at=now,
        )
    )
    return head


async def advance_cursor(
    session: AsyncSession, chain_id: int, block_number: int, block_hash: str, now: datetime
) -> None:
    """One statement once the cursor exists (no read first)."""
    moved = await session.execute(
        update(ChainCursor)
        .where(ChainCursor.chain_id == chain_id, ChainCursor.role == INDEXER)
        .values(block_number=block_number, block_hash=block_hash, updated_at=now)
        .execution_options(synchronize_session=False)
    )
    if moved.rowcount == 0:  # type: ignore[attr-defined]
        session.add(
            ChainCursor(
                chain_id=chain_id,
                role=INDEXER,
                block_number=block_number,
                block_hash=block_hash,
                updated_at=now,
            )
        )
    await session.flush()


async def replace_refund_hash(session: AsyncSession, *, old: str, new: str) -> None:
    """A refund transaction was replaced (same nonce, higher fees): follow the new one."""
    deposit = await session.scalar(select(Deposit).where(Deposit.refund_tx_hash == old))
    if deposit is not None:
        deposit.refund_tx_hash = new
