"""What a worker's unit test stands on: a migrated SQLite database, the destination chain's
configuration, the in-memory chain port and the chain's live state, and a clock to move."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from crossfill.config import ConfirmationTier
from crossfill.kinds.evm.config import ChainConfig, evm_chains
from crossfill.kinds.evm.follower import ChainFollower
from crossfill.kinds.evm.indexer import Indexer
from crossfill.kinds.evm.positions import UserPositions
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.kinds.evm.solver import Solver
from crossfill.kinds.evm.state import ChainState
from crossfill.kinds.evm.txmanager import TxManager
from crossfill.metrics import Metrics
from crossfill.store.db import session_factory
from crossfill.store.tables import Request
from crossfill.types import NATIVE_EVM_ADDRESS, ChainId
from tests.support.database import engine_of, sqlite_url
from tests.support.synthetic import synthetic_requests
from tests.unit.deployment_samples import sample_deployment
from tests.unit.fake_chain import FakeChain

START = datetime(2026, 11, 23, 12, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


# What the solver and every signing key hold on the chain, in wei.
SIGNER_BALANCE = 10**21


@dataclass
class ChainWorld:
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    config: ChainConfig
    chain: FakeChain
    state: ChainState
    runtime: ChainRuntime
    clock: Clock
    metrics: Metrics

    def signer(self) -> LocalAccount:
        """A new signing key that can pay for its transactions on the chain."""
        account: LocalAccount = Account.create()
        self.chain.fund(account.address, SIGNER_BALANCE)
        return account

    def indexer(self, confirmations: int) -> Indexer:
        """The chain's indexer, every deposit needing `confirmations` blocks."""
        config = self.config.model_copy(
            update={"confirmations": (ConfirmationTier(blocks=confirmations),)}
        )
        runtime = ChainRuntime(
            config, self.chain, self.state, self.runtime.follower, self.runtime.positions
        )
        return Indexer(
            runtime, self.sessions, now=self.clock, interval_seconds=0.1, metrics=self.metrics
        )

    async def waiting_native_requests(self, count: int, amount: int) -> list[dict[str, Any]]:
        """`count` requests waiting for a native deposit of `amount` on this chain, stored;
        their rows."""
        rows = synthetic_requests(count, start=START).requests
        for row in rows:
            row.update(
                status="waiting", fail_reason=None, refund_fail_reason=None,
                origin_chain_id=self.config.id, origin_currency=NATIVE_EVM_ADDRESS,
                amount_in=str(amount), expires_at=START + timedelta(minutes=5),
                updated_at=START,
            )  # fmt: skip
        async with self.engine.begin() as connection:
            await connection.execute(insert(Request), rows)
        return rows

    def solver(self, account: LocalAccount | None = None) -> Solver:
        """The chain's solver (this process, "me"), signing with `account` (a new funded
        key by default) through a journal that knows the solver's balance as the state has it."""
        txmanager = TxManager(
            self.chain, self.state, account or self.signer(), self.sessions, now=self.clock,
            holder="me", funds=lambda: self.state.solver_balance(NATIVE_EVM_ADDRESS),
        )  # fmt: skip
        return Solver(
            self.runtime, self.sessions, txmanager, now=self.clock, interval_seconds=0.1,
            owner="me", metrics=self.metrics,
        )  # fmt: skip


@asynccontextmanager
async def chain_world(tmp_path: Path, database_url: str | None = None) -> AsyncIterator[ChainWorld]:
    """On a SQLite file in `tmp_path`, or the database at `database_url`."""
    url = database_url or sqlite_url(tmp_path / "worker.db")
    async with engine_of(url, migrated=True) as engine:
        config = evm_chains(sample_deployment())[1]
        chain = FakeChain(ChainId(config.id))
        state = ChainState(chain_id=config.id, lag_threshold_seconds=None, started_at=0.0)
        state.record_head(chain.head_block, 0.0)
        state.priority_fee_per_gas = 1
        state.solver_balances = {NATIVE_EVM_ADDRESS: SIGNER_BALANCE}
        metrics = Metrics()
        follower = ChainFollower(
            chain,
            state,
            config=config,
            solver="0x",
            tokens=(),
            interval_seconds=1,
            clock=float,
            metrics=metrics,
        )
        runtime = ChainRuntime(config, chain, state, follower, UserPositions(chain, state))
        yield ChainWorld(
            engine, session_factory(engine), config, chain, state, runtime, Clock(), metrics
        )
