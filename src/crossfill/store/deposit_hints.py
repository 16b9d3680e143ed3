"""Deposit hints (`POST /transactions/index`) from an API replica to the process that runs the
indexers, over PostgreSQL NOTIFY. A hint only hurries the indexer along: one that is lost is
found by the indexer's next scan, so forwarding never fails the request."""

from __future__ import annotations

from collections.abc import Callable

import structlog
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.domain.identifiers import is_decimal, is_hash32
from crossfill.store import pg_notify
from crossfill.store.db import DATABASE_FAILURES

log = structlog.get_logger(__name__)
CHANNEL = "crossfill_deposit_hints"


async def forward(engine: AsyncEngine, chain_id: int, tx_hash: str) -> None:
    """To the indexers' process. On SQLite there is no other process to tell."""
    if engine.dialect.name == "sqlite":
        return
    try:
        await pg_notify.notify(engine, CHANNEL, f"{chain_id}:{tx_hash}")
    except DATABASE_FAILURES as exc:
        log.warning("deposit_hint_not_forwarded", chain_id=chain_id, error=str(exc))


async def listen(database_url: str, on_hint: Callable[[int, str], object]) -> None:
    """Calls `on_hint(chain_id, tx_hash)` for every forwarded hint until cancelled (returns at
    once on SQLite)."""

    def received(payload: str) -> None:
        chain_id, _, tx_hash = payload.partition(":")
        if is_decimal(chain_id) and len(chain_id) < 20 and is_hash32(tx_hash):
            on_hint(int(chain_id), tx_hash)

    await pg_notify.listen(database_url, CHANNEL, received)
