"""One writer per signing key and chain: a lease row with a fencing token. The caller owns the
transaction; `renew` belongs in the same transaction as the journal write it guards.

A holder is one start of one process (`host:pid:suffix`), optionally followed by the name of
the worker it was configured as (`@name`, unique among the worker processes running at a
time). A process that starts under a name takes the lease over at once from an earlier start of
that name (`LeaseClaim.restarting`): the token moves on, so the earlier start, were it still
alive, can journal nothing more; otherwise a lease held by another holder is taken only once
it has lapsed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.store.db import as_utc
from crossfill.store.tables import SignerLease


@dataclass(frozen=True)
class LeaseClaim:
    """Whose lease on signing for `sender` on `chain_id`: `holder`'s, for `lease` at a time."""

    chain_id: int
    sender: str
    holder: str
    lease: timedelta
    # The holder's first claim since its process started: an earlier start of the same worker
    # name (see `worker_name`) holds nothing it needs to keep.
    restarting: bool = False


def holder_of(process: str, worker_name: str | None) -> str:
    """The holder a process start (`host:pid:suffix`) claims leases as."""
    return process if worker_name is None else f"{process}@{worker_name}"


def worker_name(holder: str) -> str | None:
    """The configured worker name in `holder`, None without one."""
    _, at, name = holder.partition("@")
    return name if at else None


def _restart_of(claim: LeaseClaim, holder: str) -> bool:
    """Whether `claim` is the first of a new start of the worker that held the lease as
    `holder`."""
    name = worker_name(claim.holder)
    return claim.restarting and name is not None and worker_name(holder) == name


async def take(session: AsyncSession, claim: LeaseClaim, *, now: datetime) -> int | None:
    """The fencing token if the claim's holder holds (or now takes) the lease; None while
    another holder's lease runs. Taking it over from a lapsed holder increments the token."""
    chain_id, sender, holder = claim.chain_id, claim.sender, claim.holder
    expires_at = now + claim.lease
    row = await _locked(session, chain_id, sender)
    if row is None:
        first = SignerLease(
            chain_id=chain_id, sender=sender, holder=holder, token=1, expires_at=expires_at
        )
        try:
            async with session.begin_nested():
                session.add(first)
            return 1
        except IntegrityError:
            # Another transaction wrote the first lease a moment ago (committed, or the insert
            # would still wait): perhaps another worker of this very holder; read it as is.
            row = await _locked(session, chain_id, sender)
            if row is None:
                return None
    if row.holder != holder:
        if as_utc(row.expires_at) > now and not _restart_of(claim, row.holder):
            return None
        row.holder, row.token = holder, row.token + 1
    row.expires_at = expires_at
    return row.token


async def _locked(session: AsyncSession, chain_id: int, sender: str) -> SignerLease | None:
    row: SignerLease | None = await session.scalar(
        select(SignerLease)
        .where(SignerLease.chain_id == chain_id, SignerLease.sender == sender)
        .with_for_update()
    )
    return row


async def renew(session: AsyncSession, claim: LeaseClaim, *, token: int, now: datetime) -> bool:
    """Extend the lease if the claim's holder still holds it under `token` (the fence); False
    if it was lost meanwhile, and then the caller must not write."""
    renewed = await session.execute(
        update(SignerLease)
        .where(
            SignerLease.chain_id == claim.chain_id,
            SignerLease.sender == claim.sender,
            SignerLease.holder == claim.holder,
            SignerLease.token == token,
        )
        .values(expires_at=now + claim.lease)
    )
    return bool(renewed.rowcount == 1)  # type: ignore[attr-defined]


async def release_held(session: AsyncSession, holder: str, *, now: datetime) -> None:
    """End every lease `holder` holds, now (its process stops): another takes them at once,
    under a new token."""
    await session.execute(
        update(SignerLease).where(SignerLease.holder == holder).values(expires_at=now)
    )


async def release_all(session: AsyncSession) -> None:
    """Free every signer lease. Only for a single worker process (SQLite): the holders are
    gone, and a restarted process need not wait for their leases to lapse."""
    await session.execute(delete(SignerLease))
