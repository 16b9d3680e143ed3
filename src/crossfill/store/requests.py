"""Repository of requests and their transactions. Never commits: the caller owns the transaction."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.record_facts import DepositAddressFacts, Moved, deposit_address_wire
from crossfill.domain.record_outcome import SETTLED
from crossfill.domain.status import RequestStatus, check_transition
from crossfill.domain.status_record import RequestFacts, status_record
from crossfill.store import app_fees, books, outbox_signal, sponsor_payments
from crossfill.store.db import as_utc
from crossfill.store.group_commit import Row
from crossfill.store.tables import (
    AppFee,
    Base,
    OutboxEvent,
    Request,
    RequestTransaction,
    SponsorPayment,
)

REQUESTS = Base.metadata.tables[Request.__tablename__]
APP_FEES = Base.metadata.tables[AppFee.__tablename__]
SPONSOR_PAYMENTS = Base.metadata.tables[SponsorPayment.__tablename__]


@dataclass(frozen=True)
class QuoteRows:
    """A new quote's rows as column values: the request, its app-fee shares, its sponsor
    payment."""

    request: dict[str, Any]
    app_fees: list[dict[str, Any]]
    sponsor_payment: dict[str, Any] | None

    def inserts(self) -> list[Row]:
        rows: list[Row] = [(REQUESTS, self.request)]
        rows += [(APP_FEES, share) for share in self.app_fees]
        if self.sponsor_payment is not None:
            rows.append((SPONSOR_PAYMENTS, self.sponsor_payment))
        return rows


async def get(session: AsyncSession, request_id: str, *, lock: bool = False) -> Request | None:
    """`lock`: as `by_order_id`'s."""
    if lock:
        return await session.get(Request, request_id, with_for_update=True, populate_existing=True)
    return await session.get(Request, request_id)


async def by_order_id(
    session: AsyncSession, order_id: str, *, lock: bool = False
) -> Request | None:
    """`lock`: its row locked until the transaction ends (PostgreSQL; SQLite has one writer)
    and read afresh, so a deposit's judge sees what a judge before it committed."""
    query = select(Request).where(Request.order_id == order_id)
    if lock:
        query = query.with_for_update().execution_options(populate_existing=True)
    return await session.scalar(query)


async def get_each(session: AsyncSession, request_ids: Collection[str]) -> dict[str, Request]:
    """`get` for many requests in one query: those found, by id."""
    if not request_ids:
        return {}
    rows = await session.scalars(select(Request).where(Request.id.in_(request_ids)))
    return {request.id: request for request in rows}


async def by_order_ids(
    session: AsyncSession, order_ids: Collection[str], *, lock: bool = False
) -> dict[str, Request]:
    """`by_order_id` for many orders in one query (locked in the order of their ids, so two
    transactions locking some of the same wait for each other rather than deadlock)."""
    if not order_ids:
        return {}
    query = select(Request).where(Request.order_id.in_(order_ids)).order_by(Request.id)
    if lock:
        query = query.with_for_update().execution_options(populate_existing=True)
    return {request.order_id: request for request in await session.scalars(query)}


async def first_open_quote_from(session: AsyncSession, chain_id: int) -> datetime | None:
    """When the oldest request still waiting for its deposit on `chain_id` was quoted."""
    return await session.scalar(
        select(func.min(Request.created_at)).where(
            Request.origin_chain_id == chain_id,
            Request.status.in_([RequestStatus.WAITING, RequestStatus.DEPOSITING]),
        )
    )


async def transactions_of(session: AsyncSession, request_id: str) -> list[RequestTransaction]:
    rows = await session.scalars(
        select(RequestTransaction)
        .where(RequestTransaction.request_id == request_id)
        .order_by(RequestTransaction.id)
    )
    return list(rows)


async def transactions_of_each(
    session: AsyncSession, request_ids: Collection[str]
) -> dict[str, list[RequestTransaction]]:
    """`transactions_of` for many requests in one query: each request's, in id order (an empty
    list for one without any)."""
    found: dict[str, list[RequestTransaction]] = {request_id: [] for request_id in request_ids}
    if not found:
        return found
    rows = await session.scalars(
        select(RequestTransaction)
        .where(RequestTransaction.request_id.in_(found))
        .order_by(RequestTransaction.id)
    )
    for row in rows:
        found[row.request_id].append(row)
    return found


def as_utc_ms(moment: datetime) -> int:
    return int(as_utc(moment).timestamp() * 1000)


STATUS_EVENT = "request.status.updated"
IN_KINDS = frozenset({"deposit"})


def deposit_address_facts(request: Request) -> DepositAddressFacts | None:
    if request.deposit_address is None or request.deposit_address_type is None:
        return None
    return DepositAddressFacts(
        address=request.deposit_address,
        type=request.deposit_address_type,
        depositor=request.depositor,
        deposit_tx_hash=request.deposit_tx_hash,
        recovery_address=request.recovery_address,
    )


def facts_of(request: Request, transactions: list[RequestTransaction]) -> RequestFacts:
    return RequestFacts(
        request_id=request.id,
        status=RequestStatus(request.status),
        origin_chain_id=request.origin_chain_id,
        destination_chain_id=request.destination_chain_id,
        in_tx_hashes=[tx.tx_hash for tx in transactions if tx.kind in IN_KINDS],
        out_tx_hashes=[tx.tx_hash for tx in transactions if tx.kind not in IN_KINDS],
        updated_at_ms=as_utc_ms(request.updated_at),
        created_at_ms=as_utc_ms(request.created_at),
        fail_reason=request.fail_reason,
        refund_fail_reason=request.refund_fail_reason,
        details=request.fail_details,
    )


async def move(
    session: AsyncSession,
    request: Request,
    target: RequestStatus,
    *,
    now: datetime,
    fail_reason: str | None = None,
    reorg: bool = False,
    transactions: list[RequestTransaction] | None = None,
) -> None:
    """Change status (checked by the status machine) and write its event in the same
    transaction (`transactions`: see `publish`)."""
    check_transition(RequestStatus(request.status), target, reorg=reorg)
    request.status = target
    request.updated_at = now
    if fail_reason is not None:
        request.fail_reason = fail_reason
    await app_fees.follow_status(session, request, now=now)
    await sponsor_payments.follow_status(session, request, now=now)
    await books.follow_status(session, request, now=now)
    await publish(session, request, now=now, transactions=transactions)


async def publish(
    session: AsyncSession,
    request: Request,
    *,
    now: datetime,
    transactions: list[RequestTransaction] | None = None,
) -> OutboxEvent:
    """Queue the request's current status as an event, in the caller's transaction.
    `transactions`: the request's, when the caller read them in this transaction and made
    every change to them since through `record_transaction(..., known=transactions)`; they
    are not read again (and nothing is flushed: the request's own changes go with the next
    statement)."""
    if transactions is None:
        await session.flush()
        transactions = await transactions_of(session, request.id)
    payload = status_record(facts_of(request, transactions))
    payload["requestId"] = request.id
    payload["referrer"] = request.referrer
    payload["depositAddress"] = deposit_address_wire(deposit_address_facts(request), "v2")
    keyed = request.api_key_id is not None
    event = OutboxEvent(
        request_id=request.id,
        event=STATUS_EVENT,
        payload=payload,
        created_at=now,
        # A keyed request's event is also its key's webhook delivery, due at once.
        api_key_id=request.api_key_id,
        delivery="pending" if keyed else None,
        next_attempt_at=now if keyed else None,
    )
    session.add(event)
    # Once a transaction: the server delivers one notification of a channel per commit anyway.
    notified = outbox_signal.marked(session.sync_session)
    outbox_signal.mark(session.sync_session)
    if not notified and session.bind is not None and session.bind.dialect.name == "postgresql":
        await session.execute(text("NOTIFY crossfill_outbox"))  # delivered on commit
    return event


async def record_transaction(
    session: AsyncSession,
    request_id: str,
    *,
    kind: str,
    chain_id: int,
    tx_hash: str,
    status: str,
    now: datetime,
    block_number: int | None = None,
    fee: int | None = None,
    timestamp: int | None = None,
    moved: Moved | None = None,
    fee_usd_micros: int | None = None,
    sender: str | None = None,
    keep_mined: bool = False,
    known: list[RequestTransaction] | None = None,
) -> RequestTransaction:
    """Insert or update the request's transaction (idempotent per request, kind and hash);
    facts not given keep what was recorded before. `keep_mined`: a transaction already
    recorded mined (success or failure) keeps that status (a sender's late "pending").
    `known`: all the request's transactions, read in this transaction (`transactions_of`) and
    changed since only through here: the row is looked up there, not read again, a new one is
    appended to it, and nothing is flushed (the row is written with the session's next
    flush)."""
    if known is None:
        existing = await session.scalar(
            select(RequestTransaction).where(
                RequestTransaction.request_id == request_id,
                RequestTransaction.kind == kind,
                RequestTransaction.tx_hash == tx_hash,
            )
        )
    else:
        existing = next(
            (tx for tx in known if tx.kind == kind and tx.tx_hash == tx_hash),
            None,
        )
    row = existing or RequestTransaction(
        request_id=request_id, kind=kind, chain_id=chain_id, tx_hash=tx_hash, created_at=now
    )
    if not (keep_mined and existing is not None and existing.status in SETTLED):
        row.status = status
    row.block_number = block_number if block_number is not None else row.block_number
    row.fee = str(fee) if fee is not None else row.fee
    row.timestamp = timestamp if timestamp is not None else row.timestamp
    row.fee_usd_micros = fee_usd_micros if fee_usd_micros is not None else row.fee_usd_micros
    row.sender = sender if sender is not None else row.sender
    if moved is not None:
        row.amount, row.currency = str(moved.amount), moved.currency
        row.amount_usd_micros = moved.usd_micros
    if existing is None:
        session.add(row)
    if known is None:
        await session.flush()
    elif existing is None:
        known.append(row)  # inserted after the others, so given the highest id: in id order
    return row


async def claim(
    session: AsyncSession,
    *,
    destination_chain_id: int,
    status: RequestStatus,
    owner: str,
    now: datetime,
    lease: timedelta,
    limit: int,
    ids: Collection[str] | None = None,
    exclusivity_over_at: datetime | None = None,
) -> list[Request]:
    """Lease up to `limit` requests in `status` whose lease is free or expired (only those of
    `ids`, when given; with `exclusivity_over_at`, only those no external solver holds
    exclusively then)."""
    query = (
        select(Request)
        .where(
            Request.destination_chain_id == destination_chain_id,
            Request.status == status,
            (Request.lease_expires_at.is_(None)) | (Request.lease_expires_at < now),
        )
        .order_by(Request.updated_at)
        .limit(limit)
    )
    if ids is not None:
        query = query.where(Request.id.in_(ids))
    if exclusivity_over_at is not None:
        query = query.where(
            Request.exclusive_solver.is_(None)
            | (Request.exclusivity_deadline < exclusivity_over_at)
        )
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    claimed = list(await session.scalars(query))
    for request in claimed:
        request.lease_owner = owner
        request.lease_expires_at = now + lease
    await session.flush()
    return claimed


async def awaiting_exclusive_fill(
    session: AsyncSession, *, destination_chain_id: int, now: datetime
) -> list[Request]:
    """Paid orders external solvers won that no solver of ours holds leased: the winner's
    fill is watched for on chain."""
    query = select(Request).where(
        Request.destination_chain_id == destination_chain_id,
        Request.status == RequestStatus.PENDING,
        Request.exclusive_solver.is_not(None),
        (Request.lease_expires_at.is_(None)) | (Request.lease_expires_at < now),
    )
    return list(await session.scalars(query))


async def won_by(session: AsyncSession, solver: str, *, limit: int) -> list[Request]:
    """Paid, unfilled orders the external solver `solver` (an EVM address) won, oldest first."""
    query = (
        select(Request)
        .where(
            Request.exclusive_solver == solver.lower(),
            Request.status == RequestStatus.PENDING,
        )
        .order_by(Request.updated_at)
        .limit(limit)
    )
    return list(await session.scalars(query))


async def count_by_status(session: AsyncSession) -> dict[RequestStatus, int]:
    """How many requests are in each status (statuses with none are left out): one GROUP BY
    over the status index."""
    rows = await session.execute(select(Request.status, func.count()).group_by(Request.status))
    return {RequestStatus(status): count for status, count in rows}


async def lease_until(session: AsyncSession, request_id: str, until: datetime) -> None:
    """Keep the request leased until `until` (a retry later), whoever holds it."""
    request = await session.get(Request, request_id)
    if request is not None:
        request.lease_expires_at = until


async def replace_transaction_hash(
    session: AsyncSession, request_id: str, *, old: str, new: str
) -> None:
    """A transaction of the request was replaced (same nonce, higher fees): show the new hash."""
    row = await session.scalar(
        select(RequestTransaction).where(
            RequestTransaction.request_id == request_id, RequestTransaction.tx_hash == old
        )
    )
    if row is not None:
        row.tx_hash = new
        await session.flush()


async def forget_transaction(
    session: AsyncSession, request_id: str, *, kind: str, tx_hash: str
) -> bool:
    """Drop a transaction that is no longer on the chain (reorged out); True if it was there."""
    row = await session.scalar(
        select(RequestTransaction).where(
            RequestTransaction.request_id == request_id,
            RequestTransaction.kind == kind,
            RequestTransaction.tx_hash == tx_hash,
        )
    )
    if row is None:
        return False
    await session.delete(row)
    await session.flush()
    return True


async def release_leases(session: AsyncSession) -> int:
    """Free every lease. Only for a single worker process (SQLite): the holders are gone."""
    result = await session.execute(
        update(Request)
        .where(Request.lease_owner.is_not(None))
        .values(lease_owner=None, lease_expires_at=None)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def release_owned(session: AsyncSession, owner: str) -> int:
    """Free the leases `owner` holds (its process stops): another process claims those
    requests at once."""
    result = await session.execute(
        update(Request)
        .where(Request.lease_owner == owner)
        .values(lease_owner=None, lease_expires_at=None)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


async def release_others(
    session: AsyncSession, *, destination_chain_id: int, status: RequestStatus, owner: str
) -> int:
    """Free the leases other owners hold on requests in `status` bound for the chain: a
    process that has just taken the solver key's signer lease there over is the only one
    that can sign their fills (the fencing token stops the previous holder), and each fill
    already signed is in the journal, where the new holder finds it."""
    result = await session.execute(
        update(Request)
        .where(
            Request.destination_chain_id == destination_chain_id,
            Request.status == status,
            Request.lease_owner.is_not(None),
            Request.lease_owner != owner,
        )
        .values(lease_owner=None, lease_expires_at=None)
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
