"""Client hints (`POST /transactions/index`) for one origin chain, until each is mined or
provably dropped.

A hint is a shortcut, never the only way a deposit is found (the indexer's scan finds every
one), so what is kept is bounded: the queue of new hints, the hints looked at per tick, and the
hints not mined yet. A hinted transaction without a receipt is looked at again at each new
head. It is forgotten when provably dropped: its sender's nonce was used by another transaction
that got mined (a replacement, a cancellation). One the node has never seen (a client hinting
before broadcasting, a node that lost it) cannot be proved anything about; it is kept for
`UNMINED_HINT_PATIENCE`, after which the scan alone will find it if it ever is mined.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import structlog

from crossfill.chains.evm import BlockHead
from crossfill.chains.port import EvmPort

log = structlog.get_logger(__name__)

MAX_QUEUED_HINTS = 1_000
MAX_HINTS_PER_TICK = 50
MAX_UNMINED_HINTS = 200
UNMINED_HINT_PATIENCE = timedelta(minutes=5)


@dataclass
class UnminedHint:
    first_hinted: datetime
    # From the node's copy of the transaction, once it has one.
    sender: str | None = None
    nonce: int | None = None

    def forgettable(self, now: datetime) -> bool:
        """Never seen by the node for the whole patience: nothing more to learn from it."""
        return self.sender is None and now - self.first_hinted >= UNMINED_HINT_PATIENCE


class HintWatch:
    def __init__(
        self, client: EvmPort, *, now: Callable[[], datetime], on_hint: Callable[[], None]
    ) -> None:
        self.client = client
        self.now = now
        self._on_hint = on_hint
        self._queue: asyncio.Queue[str] = asyncio.Queue(MAX_QUEUED_HINTS)
        self._unmined: dict[str, UnminedHint] = {}
        self._head: str | None = None

    def hint(self, tx_hash: str) -> bool:
        """Queue a client's hint; False when the queue is full (the scan will find it)."""
        try:
            self._queue.put_nowait(tx_hash)
        except asyncio.QueueFull:
            return False
        self._on_hint()
        return True

    def queued(self) -> bool:
        return not self._queue.empty()

    def unmined(self) -> set[str]:
        return set(self._unmined)

    def new(self) -> list[str]:
        """Hints queued since the last look: a bounded number."""
        return [
            self._queue.get_nowait() for _ in range(min(self._queue.qsize(), MAX_HINTS_PER_TICK))
        ]

    def recheck(self, head: BlockHead) -> list[str]:
        """At a new head, the hints not mined yet: a bounded number (none at the same head)."""
        if head.hash == self._head:
            return []
        self._head = head.hash
        now = self.now()
        self._unmined = {
            tx_hash: hint for tx_hash, hint in self._unmined.items() if not hint.forgettable(now)
        }
        return list(self._unmined)[:MAX_HINTS_PER_TICK]

    def mined(self, tx_hash: str) -> None:
        self._unmined.pop(tx_hash, None)

    def keep(self, tx_hash: str) -> UnminedHint | None:
        """Keep looking for it (the lookup failed, or found no receipt); None when there is
        no room left for another unmined hint."""
        hint = self._unmined.get(tx_hash)
        if hint is None and len(self._unmined) < MAX_UNMINED_HINTS:
            hint = self._unmined[tx_hash] = UnminedHint(self.now())
        return hint

    async def not_mined(self, tx_hash: str) -> None:
        """No receipt for it yet: kept, unless its nonce went to another mined transaction."""
        hint = self.keep(tx_hash)
        if hint is None:
            return
        if hint.sender is None or hint.nonce is None:
            sent = await self.client.transaction_sender(tx_hash)
            if sent is None:
                return
            hint.sender, hint.nonce = sent
        if await self.client.mined_nonce(hint.sender) <= hint.nonce:
            return
        # Its nonce is used; unless by this very transaction, mined since the receipt lookup.
        if await self.client.receipt(tx_hash) is None:
            log.info("hinted transaction dropped: its nonce was used", tx_hash=tx_hash)
            self._unmined.pop(tx_hash, None)
