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
# A client's name (an API key's or an address group's bucket) is short; NOTIFY takes 8000 bytes.
MAX_CLIENT = 100
# Whose budget a hint forwarded without a client spends (a replica of an older version).
FORWARDED = "forwarded"


async def forward(engine: AsyncEngine, chain_id: int, tx_hash: str, client: str) -> None:
    """To the indexers' process, with the client whose hint budget it spends. On SQLite there
    is no other process to tell."""
    if engine.dialect.name == "sqlite":
        return
    try:
        await pg_notify.notify(engine, CHANNEL, f"{chain_id}:{tx_hash}:{client[:MAX_CLIENT]}")
    except DATABASE_FAILURES as exc:
        log.warning("deposit_hint_not_forwarded", chain_id=chain_id, error=str(exc))


async def listen(database_url: str, on_hint: Callable[[int, str, str], object]) -> None:
    """Calls `on_hint(chain_id, tx_hash, client)` for every forwarded hint until cancelled
    (returns at once on SQLite)."""

    def received(payload: str) -> None:
        # The client is last: an address group has colons of its own (`ip:2001:db8::/64`).
        chain_id, _, rest = payload.partition(":")
        tx_hash, _, client = rest.partition(":")
        if is_decimal(chain_id) and len(chain_id) < 20 and is_hash32(tx_hash):
            on_hint(int(chain_id), tx_hash, client[:MAX_CLIENT] or FORWARDED)

    await pg_notify.listen(database_url, CHANNEL, received)
