"""The keeper of one signing key's lease on one chain (`TxManager`, `store.signer_leases`).

Held, the lease is renewed every third of its length, whatever the workers sharing the key
are doing (a long tick, a quiet spell): it lapses only when this process stops renewing it
(killed, frozen, cut off from the database). Not held, it is asked for every
`SIGNER_ASKED_EVERY`, a fixed interval (not a backoff: a lease held elsewhere is no failure),
so a standby takes the key over within that of the lease's lapse (or of its release by a
graceful stop); the workers of the key then hear of it at once (`on_taken`), and until then
are refused without a database read (`TxManager.hold_signer`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from crossfill.errors import SignerBusy
from crossfill.kinds.evm.txmanager import SIGNER_ASKED_EVERY, TxManager
from crossfill.loops import TRANSIENT

log = structlog.get_logger(__name__)


@dataclass
class SignerKeeper:
    txmanager: TxManager
    # Called with each new fencing token this process takes (the key's workers may go).
    on_taken: Callable[[], None] = lambda: None

    @property
    def name(self) -> str:
        """`signer-lease-<chain id>-<the key's address start>`."""
        return f"signer-lease-{self.txmanager.client.chain_id}-{self.txmanager.sender[:10]}"

    async def run(self) -> None:
        renew_every = self.txmanager.lease.total_seconds() / 3
        ask_every = SIGNER_ASKED_EVERY.total_seconds()
        held: int | None = None
        while True:
            try:
                token = await self.txmanager.keep_signer()
            except SignerBusy:
                held = None
                await asyncio.sleep(ask_every)
                continue
            except TRANSIENT as exc:
                log.warning("signer lease not renewed", worker=self.name, error=str(exc))
                held = None
                await asyncio.sleep(ask_every)
                continue
            if token != held:
                held = token
                self.on_taken()
            await asyncio.sleep(renew_every)
