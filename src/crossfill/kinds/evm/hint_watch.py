"""Client hints (`POST /transactions/index`) for one origin chain, until each is mined or
provably dropped.

A hint is a shortcut, never the only way a deposit is found (the indexer's scan finds every
one), so what it may cost is bounded: the queue of new hints, the hints looked at per tick,
the hints not mined yet, and the RPC calls each client's hints make (`hint_budget`: a client
over its budget has its new hints refused and its kept ones wait). A hinted transaction
without a receipt is looked at again at new heads, less and less often (`RECHECK_FIRST`,
doubling up to `RECHECK_MAX`). It is forgotten when provably dropped: its sender's nonce was
used by another transaction that got mined (a replacement, a cancellation). One the node has
never seen (a client hinting before broadcasting, a node that lost it, a made-up hash) cannot
be proved anything about; it is kept for `UNMINED_HINT_PATIENCE`, after which the scan alone
will find it if it ever is mined.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

import structlog

from crossfill.kinds.evm.client import BlockHead
from crossfill.kinds.evm.hint_budget import HintBudget
from crossfill.kinds.evm.port import EvmPort

log = structlog.get_logger(__name__)

MAX_QUEUED_HINTS = 1_000
MAX_HINTS_PER_TICK = 50
MAX_UNMINED_HINTS = 200
UNMINED_HINT_PATIENCE = timedelta(minutes=5)
RECHECK_FIRST = timedelta(seconds=2)
RECHECK_MAX = timedelta(minutes=1)
# RPC calls per client per minute when the deployment does not say.
DEFAULT_CALLS_PER_CLIENT_PER_MINUTE = 60


@dataclass(frozen=True)
class Hint:
    """A transaction a client says pays a deposit; `client` names whose budget it spends."""

    tx_hash: str
    client: str


@dataclass
class UnminedHint:
    client: str
    first_hinted: datetime
    next_look: datetime
    looks: int = 0
    # From the node's copy of the transaction, once it has one.
    sender: str | None = None
    nonce: int | None = None

    def forgettable(self, now: datetime) -> bool:
        """Never seen by the node for the whole patience: nothing more to learn from it."""
        return self.sender is None and now - self.first_hinted >= UNMINED_HINT_PATIENCE

    def looked(self, now: datetime) -> None:
        """A look found nothing: the next one waits twice as long as the last (up to a cap)."""
        self.looks += 1
        self.next_look = now + min(RECHECK_FIRST * 2 ** (self.looks - 1), RECHECK_MAX)


class HintWatch:
    def __init__(
        self,
        client: EvmPort,
        *,
        now: Callable[[], datetime],
        on_hint: Callable[[], None],
        calls_per_client_per_minute: int = DEFAULT_CALLS_PER_CLIENT_PER_MINUTE,
    ) -> None:
        self.client = client
        self.now = now
        self._on_hint = on_hint
        self._budget = HintBudget(calls_per_client_per_minute, now=now)
        self._queue: asyncio.Queue[Hint] = asyncio.Queue(MAX_QUEUED_HINTS)
        self._unmined: dict[str, UnminedHint] = {}
        self._head: str | None = None

    def hint(self, hint: Hint) -> bool:
        """Queue a client's hint, its receipt lookup paid from the client's budget; False
        when the budget or the queue is full (the scan will find it)."""
        watched = self._unmined.get(hint.tx_hash)
        if watched is not None and watched.client == hint.client:
            return True  # this client's hint is watched already: nothing more to spend
        if not self._budget.take(hint.client):
            return False
        try:
            self._queue.put_nowait(hint)
        except asyncio.QueueFull:
            return False
        self._on_hint()
        return True

    def queued(self) -> bool:
        return not self._queue.empty()

    def unmined(self) -> set[str]:
        return set(self._unmined)

    def new(self) -> list[Hint]:
        """Hints queued since the last look: a bounded number."""
        return [
            self._queue.get_nowait() for _ in range(min(self._queue.qsize(), MAX_HINTS_PER_TICK))
        ]

    def recheck(self, head: BlockHead) -> list[Hint]:
        """At a new head, the hints not mined yet that are due for another look and whose
        client can pay for its receipt lookup: a bounded number (none at the same head)."""
        if head.hash == self._head:
            return []
        self._head = head.hash
        now = self.now()
        self._unmined = {
            tx_hash: hint for tx_hash, hint in self._unmined.items() if not hint.forgettable(now)
        }
        due: list[Hint] = []
        for tx_hash, hint in self._unmined.items():
            if len(due) == MAX_HINTS_PER_TICK:
                break
            if hint.next_look <= now and self._budget.take(hint.client):
                due.append(Hint(tx_hash, hint.client))
        return due

    def mined(self, tx_hashes: Iterable[str]) -> None:
        for tx_hash in tx_hashes:
            self._unmined.pop(tx_hash, None)

    def keep(self, hint: Hint) -> UnminedHint | None:
        """Keep looking for it, later (the lookup failed, or found no receipt); None when
        there is no room left for another unmined hint."""
        now = self.now()
        kept = self._unmined.get(hint.tx_hash)
        if kept is None:
            if len(self._unmined) >= MAX_UNMINED_HINTS:
                return None
            kept = self._unmined[hint.tx_hash] = UnminedHint(hint.client, now, now)
        # The last client to hint it pays for the next look: one out of budget cannot hold
        # back another's hint of the same transaction.
        kept.client = hint.client
        kept.looked(now)
        return kept

    async def not_mined(self, hint: Hint) -> None:
        """No receipt for it yet: kept, unless its nonce went to another mined transaction.
        Each call here is paid from the client's budget; without one, it waits for later."""
        kept = self.keep(hint)
        if kept is None:
            return
        if kept.sender is None or kept.nonce is None:
            if not self._budget.take(hint.client):
                return
            sent = await self.client.transaction_sender(hint.tx_hash)
            if sent is None:
                return
            kept.sender, kept.nonce = sent
        if not self._budget.take(hint.client):
            return
        if await self.client.mined_nonce(kept.sender) <= kept.nonce:
            return
        # Its nonce is used; unless by this very transaction, mined since the receipt lookup.
        if not self._budget.take(hint.client):
            return
        if await self.client.receipt(hint.tx_hash) is None:
            log.info("hinted transaction dropped: its nonce was used", tx_hash=hint.tx_hash)
            self._unmined.pop(hint.tx_hash, None)
