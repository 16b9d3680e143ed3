"""What a worker on one chain of the SVM or perps kind holds (its solver and its refunder,
paying through the kind's payer, and what watches deposits to it): the chain live in this
process, the store's sessions, the clock, and how long it waits between ticks. Its name is
its job's and the chain's id."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from datetime import datetime
from typing import ClassVar, Generic, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.kinds.port import Live

Chain = TypeVar("Chain", bound=Live)
# What the kind's solver and refunder pay through: its journalled payer.
Payer = TypeVar("Payer")


# eq=False: a worker equals only itself and stays hashable, as a plain class does.
@dataclass(eq=False)
class KindWorker(Generic[Chain]):
    # What the worker does, as its task's name says it (`svm-solver`, `perps-refunder`, ...).
    job: ClassVar[str]
    chain: Chain
    _: KW_ONLY
    sessions: async_sessionmaker[AsyncSession]
    now: Callable[[], datetime]
    interval_seconds: float

    @property
    def chain_id(self) -> int:
        return self.chain.config.id

    @property
    def name(self) -> str:
        """The worker's task: `<job>-<chain id>`."""
        return f"{self.job}-{self.chain_id}"
