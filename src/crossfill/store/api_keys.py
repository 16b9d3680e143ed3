"""API keys: created at random, kept only as SHA-256, looked up by that hash.

A key is 32 random bytes, so a plain SHA-256 is a sound one-way store (no password stretching
needed), and looking a key up by its hash reveals nothing about keys that do not match. The
final comparison is constant-time anyway.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.identifiers import INT64_MAX, is_decimal
from crossfill.domain.sponsor_wallet import SponsorWallet
from crossfill.store.db import as_utc
from crossfill.store.tables import ApiKey

KEY_PREFIX = "cfk_"
SHOWN_PREFIX_LENGTH = 10


@dataclass(frozen=True)
class CreatedKey:
    """A new key: `secret` exists only here, to be shown once."""

    row: ApiKey
    secret: str


def iso(moment: datetime) -> str:
    return as_utc(moment).isoformat().replace("+00:00", "Z")


def key_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


async def create(session: AsyncSession, name: str, *, now: datetime) -> CreatedKey:
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    row = ApiKey(
        name=name,
        prefix=secret[:SHOWN_PREFIX_LENGTH],
        key_hash=key_hash(secret),
        created_at=now,
    )
    session.add(row)
    await session.flush()
    return CreatedKey(row, secret)


async def all_keys(session: AsyncSession) -> list[ApiKey]:
    return list(await session.scalars(select(ApiKey).order_by(ApiKey.id)))


async def find(session: AsyncSession, reference: str) -> ApiKey | None:
    """A key by id, by its shown prefix, or by the key itself (for `revoke`, `webhooks`)."""
    if is_decimal(reference):
        if len(reference) > len(str(INT64_MAX)) or int(reference) > INT64_MAX:
            return None
        return await session.get(ApiKey, int(reference))
    by_secret = await authenticate(session, reference)
    if by_secret is not None:
        return by_secret
    matches = list(await session.scalars(select(ApiKey).where(ApiKey.prefix == reference)))
    return matches[0] if len(matches) == 1 else None


async def revoke(session: AsyncSession, key: ApiKey, *, now: datetime) -> None:
    if key.revoked_at is None:
        key.revoked_at = now


async def authenticate(session: AsyncSession, presented: str) -> ApiKey | None:
    """The active key `presented` is, or None."""
    digest = key_hash(presented)
    row = await session.scalar(select(ApiKey).where(ApiKey.key_hash == digest))
    if row is None or not hmac.compare_digest(row.key_hash, digest) or row.revoked_at:
        return None
    return row


def set_sponsor(key: ApiKey, wallet: SponsorWallet | None) -> None:
    """Set the key's sponsor wallet, or clear it."""
    key.sponsor_address = wallet.address if wallet else None
    key.sponsor_chain_id = wallet.chain_id if wallet else None
    key.sponsor_currency = wallet.currency if wallet else None
