"""One writer per signing key and chain: a lease row with a fencing token. The caller owns the
transaction; `renew` belongs in the same transaction as the journal write it guards."""

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
        if as_utc(row.expires_at) > now:
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


async def release_all(session: AsyncSession) -> None:
    """Free every signer lease. Only for a single worker process (SQLite): the holders are
    gone, and a restarted process need not wait for their leases to lapse."""
    await session.execute(delete(SignerLease))
