"""A payment of a kind's payer (the SVM chain's, the perps exchange's), a fill or a refund, as
its request's record shows it: what the chain or ledger said of it, recorded on the request
with its hash and status."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Final

from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.record_facts import Moved
from crossfill.store import requests


@dataclass(frozen=True)
class Shown:
    """Its block (0 on a chain without blocks), its time (Unix seconds), its fee (native
    units, and micro-USD) and what it paid; None where the payer does not know it."""

    block_number: int | None = None
    timestamp: int | None = None
    fee: int | None = None
    fee_usd_micros: int | None = None
    moved: Moved | None = None


# A payment the payer knows nothing more of (its chain's watcher adds it later).
NOTHING_SHOWN: Final = Shown()


async def record_shown(
    session: AsyncSession,
    request_id: str,
    shown: Shown,
    *,
    kind: str,
    chain_id: int,
    tx_hash: str,
    status: str,
    now: datetime,
) -> None:
    """The payment `tx_hash` and what is `shown` of it, recorded among the request's
    transactions (`store.requests`)."""
    await requests.record_transaction(
        session, request_id, kind=kind, chain_id=chain_id, tx_hash=tx_hash, status=status,
        now=now, block_number=shown.block_number, timestamp=shown.timestamp, fee=shown.fee,
        fee_usd_micros=shown.fee_usd_micros, moved=shown.moved,
    )  # fmt: skip
