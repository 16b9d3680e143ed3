"""The vault's token accounts of mints the chain does not serve, for the SVM indexer to follow.

A token the chain does not serve can still be paid into the vault's associated token account
for its mint. The transaction that creates that account names the vault, so the vault's own
listing sees it; a later one names only the account, and would never be listed. So the
chain's own list of the vault's token accounts (`getTokenAccountsByOwner`) is read at start,
once a minute, and at the next tick after a deposit of a mint not followed yet; each
associated token account of a mint not served that it names is followed from then on. Other
accounts the vault owns are not: a transfer into one is no deposit (the reader counts
transfers into the vault's associated accounts only), and anyone can make more of them.

A failed read is logged and tried again after a backoff, never raised: the vault and the
served accounts are listed all the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, Final

import structlog
from solders.pubkey import Pubkey

from crossfill.domain.backoff import Backoff
from crossfill.errors import ChainError, RateLimited
from crossfill.kinds.svm import programs
from crossfill.kinds.svm.client import SvmPort

log = structlog.get_logger(__name__)
DISCOVERY_INTERVAL: Final = timedelta(minutes=1)


class UnservedTokenAccounts:
    def __init__(
        self,
        client: SvmPort,
        vault: Pubkey,
        served_mints: Iterable[Pubkey],
        *,
        now: Callable[[], datetime],
        interval: timedelta = DISCOVERY_INTERVAL,
    ) -> None:
        self.client = client
        self.vault = vault
        self.served = frozenset(served_mints)
        self.now = now
        self.interval = interval
        self.backoff = Backoff()
        # The accounts followed, in the order they were found.
        self._followed: set[Pubkey] = set()
        self.followed: list[Pubkey] = []
        self._due: datetime | None = None  # None: at the next `refresh`

    def follows(self, address: Pubkey) -> bool:
        return address in self._followed

    def note_mint(self, mint: Pubkey) -> None:
        """A deposit of `mint` was read: when it is neither served nor followed, its account is
        looked for at the next tick (unless reads are failing: their backoff stands)."""
        if self.backoff.failures or mint in self.served:
            return
        if programs.token_account(self.vault, mint) not in self._followed:
            self._due = None

    def forget(self) -> None:
        """Another chain under this id (a restarted devnet): its accounts are looked for anew."""
        self._followed.clear()
        self.followed.clear()
        self._due = None

    async def refresh(self) -> None:
        """When due, read the vault's token accounts and follow the new ones."""
        now = self.now()
        if self._due is not None and now < self._due:
            return
        try:
            owned = await self.client.token_accounts_of(self.vault)
        except ChainError as exc:
            retry_after = exc.retry_after_seconds if isinstance(exc, RateLimited) else None
            delay = self.backoff.failed(at_least=retry_after)
            self._due = now + timedelta(seconds=delay)
            if self.backoff.worth_logging:
                log.warning(
                    "svm vault token accounts unread",
                    error=str(exc),
                    failures=self.backoff.failures,
                    retry_in_seconds=round(delay, 2),
                )
            return
        self.backoff.succeeded()
        self._due = now + self.interval
        for account in owned:
            if account.mint in self.served or account.address in self._followed:
                continue
            if account.address != programs.token_account(self.vault, account.mint):
                continue
            self._followed.add(account.address)
            self.followed.append(account.address)
            log.info("svm vault token account followed", account=str(account.address),
                     mint=str(account.mint))  # fmt: skip


async def whole_history(
    client: SvmPort, address: Pubkey, newest: list[dict[str, Any]], *, limit: int
) -> list[dict[str, Any]]:
    """`newest` (the first page of the address's listing, newest first) and every older page."""
    listed, page = list(newest), newest
    while len(page) == limit:
        page = await client.signatures_for(
            address, until=None, limit=limit, before=str(page[-1]["signature"])
        )
        listed.extend(page)
    return listed
