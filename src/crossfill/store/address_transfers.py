"""Repository of deposit addresses being watched, the transfers seen at them, the child
requests later transfers make, and the watcher's cursor. The caller owns the transaction."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import insert, inspect, select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.deposit_addresses import SeenTransfer, child_ids
from crossfill.domain.status import RequestStatus
from crossfill.store.requests import REQUESTS, QuoteRows
from crossfill.store.tables import AddressTransfer, ChainCursor, Request

PAID, EXCESS = "paid", "excess"
SEEN = "seen"
SWEPT = "swept"
FAILED = "failed"
REORGED = "reorged"
# Worth no more than its own sweep's gas: never swept, left at the address.
TOO_SMALL = "too_small"
ROLE = "deposit_addresses"
# The cursor of the read of contracts' payments from the node's traces, which goes at its own
# pace (`kinds.evm.deposit_addresses`).
TRACES_ROLE = "deposit_address_traces"
# Columns a child request does not copy from its parent.
_NOT_COPIED = frozenset(
    {
        "id", "order_id", "status", "fail_reason", "refund_fail_reason", "lease_owner",
        "lease_expires_at", "created_at", "updated_at", "origin_block_number",
        "fill_time_seconds", "depositor", "deposit_tx_hash", "parent_request_id", "fill_plan",
        "quote",
    }
)  # fmt: skip


async def watched(
    session: AsyncSession, chain_id: int, *, since: datetime, limit: int
) -> dict[str, Request]:
    """Deposit addresses on `chain_id` quoted since `since`, newest first, at most `limit`:
    lower-case address -> the request quoted for it."""
    rows = await session.scalars(
        select(Request)
        .where(
            Request.origin_chain_id == chain_id,
            Request.deposit_address.is_not(None),
            Request.parent_request_id.is_(None),
            Request.created_at >= since,
        )
        .order_by(Request.created_at.desc())
        .limit(limit)
    )
    return {row.deposit_address.lower(): row for row in rows if row.deposit_address}


async def record(session: AsyncSession, chain_id: int, seen: SeenTransfer, now: datetime) -> bool:
    """Store a transfer once; False when it was known already (a re-scan, or found again in
    another block after a reorg, which it then follows)."""
    known = await session.scalar(
        select(AddressTransfer).where(
            AddressTransfer.chain_id == chain_id,
            AddressTransfer.tx_hash == seen.tx_hash,
            AddressTransfer.log_index == seen.log_index,
            AddressTransfer.leg == PAID,
        )
    )
    if known is not None:
        if known.block_hash != seen.block_hash:
            # Re-included in another block after a reorg: follow it there, revive it.
            known.block_number, known.block_hash = seen.block_number, seen.block_hash
            if known.state == REORGED:
                known.state = SEEN
        return False
    session.add(
        AddressTransfer(
            chain_id=chain_id,
            **_transferred(seen),
            amount=str(seen.amount),
            leg=PAID,
            state=SEEN,
            created_at=now,
        )
    )
    await session.flush()
    return True


async def split_excess(
    session: AsyncSession, paid: AddressTransfer, excess: int, now: datetime
) -> AddressTransfer:
    """Split `excess` off a transfer: its paid leg sweeps the rest, a new leg sweeps this."""
    paid.amount = str(int(paid.amount) - excess)
    leg = AddressTransfer(
        chain_id=paid.chain_id,
        **_transferred(paid),
        amount=str(excess),
        leg=EXCESS,
        state=SEEN,
        created_at=now,
    )
    session.add(leg)
    await session.flush()
    return leg


def _transferred(source: SeenTransfer | AddressTransfer) -> dict[str, object]:
    """The columns every leg of a transfer keeps of the transfer: from the transfer as seen,
    or from another leg's row."""
    return {
        "address": source.address,
        "tx_hash": source.tx_hash,
        "log_index": source.log_index,
        "block_number": source.block_number,
        "block_hash": source.block_hash,
        "currency": source.currency,
        "depositor": source.depositor,
    }


async def unswept(session: AsyncSession, chain_id: int, limit: int) -> list[AddressTransfer]:
    rows = await session.scalars(
        select(AddressTransfer)
        .where(AddressTransfer.chain_id == chain_id, AddressTransfer.state == SEEN)
        .order_by(AddressTransfer.id)
        .limit(limit)
    )
    return list(rows)


async def owner_of(session: AsyncSession, chain_id: int, address: str) -> Request | None:
    """The request quoted for a deposit address (not a child)."""
    return await session.scalar(
        select(Request).where(
            Request.origin_chain_id == chain_id,
            Request.deposit_address == address,
            Request.parent_request_id.is_(None),
        )
    )


async def is_taken(session: AsyncSession, request_id: str) -> bool:
    """Whether a transfer already pays this request."""
    taken = await session.scalar(
        select(AddressTransfer.id).where(AddressTransfer.request_id == request_id).limit(1)
    )
    return taken is not None


async def add_child(
    session: AsyncSession, parent: Request, transfer: AddressTransfer, now: datetime
) -> Request:
    """The child request a later transfer makes: the parent's terms under ids of its own."""
    ids = child_ids(parent.id, parent.order_id, transfer.tx_hash, transfer.log_index, transfer.leg)
    existing = await session.get(Request, ids.request_id)
    if existing is not None:
        return existing
    copied = {
        attr.key: getattr(parent, attr.key)
        for attr in inspect(Request).column_attrs
        if attr.key not in _NOT_COPIED
    }
    plan = dict(parent.fill_plan) if parent.fill_plan else None
    if plan is not None:
        plan["orderId"] = ids.order_id
    child = Request(
        **copied,
        id=ids.request_id,
        order_id=ids.order_id,
        status=RequestStatus.WAITING.value,
        created_at=now,
        updated_at=now,
        fill_plan=plan,
        quote={**parent.quote, "steps": []},
        parent_request_id=parent.id,
    )
    session.add(child)
    await session.flush()
    return child


async def add_priced_child(session: AsyncSession, parent: Request, rows: QuoteRows) -> Request:
    """The child request of an open address's transfer, priced when it arrived (`rows`)."""
    for table, values in rows.inserts():
        if table is REQUESTS:
            values = {**values, "parent_request_id": parent.id, "api_key_id": parent.api_key_id}
        await session.execute(insert(table), [dict(values)])
    child = await session.get(Request, rows.request["id"])
    assert child is not None
    return child


async def cursor(session: AsyncSession, chain_id: int, role: str = ROLE) -> ChainCursor | None:
    return await session.get(ChainCursor, (chain_id, role))


async def advance_cursor(
    session: AsyncSession,
    chain_id: int,
    block_number: int,
    block_hash: str,
    now: datetime,
    role: str = ROLE,
) -> None:
    row = await cursor(session, chain_id, role)
    if row is None:
        session.add(
            ChainCursor(
                chain_id=chain_id,
                role=role,
                block_number=block_number,
                block_hash=block_hash,
                updated_at=now,
            )
        )
    else:
        row.block_number, row.block_hash, row.updated_at = block_number, block_hash, now
    await session.flush()


def watch_since(now: datetime, window: timedelta) -> datetime:
    return now - window
