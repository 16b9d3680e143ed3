"""What a worker that sends through one chain's journal holds (the solver, the deposit-address
sweeper, the permit depositor, the sponsor collector, the gasless executor, the refunder, the
app-fee payer); each of them adds only its own work."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.config import ChainConfig
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.kinds.evm.txmanager import TxManager


# eq=False: a worker equals only itself and stays hashable, as a plain class does.
@dataclass(eq=False)
class JournalledWorker:
    """The chain it works on, the store's sessions, the transaction manager that journals,
    signs and sends for its key (the solver's or a gas sponsor's, under that key's signer
    lease), the clock, and how long it waits between ticks."""

    chain: ChainRuntime
    sessions: async_sessionmaker[AsyncSession]
    txmanager: TxManager
    _: KW_ONLY
    now: Callable[[], datetime]
    interval_seconds: float

    @property
    def config(self) -> ChainConfig:
        return self.chain.config
