"""Composition root: builds every long-lived component from settings and the deployment."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import structlog
from eth_account.signers.local import LocalAccount
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from crossfill.chains.evm import EvmClient
from crossfill.chains.follower import ChainFollower
from crossfill.chains.head_subscription import WebSocketHeads
from crossfill.chains.port import EvmPort
from crossfill.chains.positions import UserPositions
from crossfill.chains.state import ChainState
from crossfill.config import ChainConfig, Deployment, load_deployment
from crossfill.config.secrets import resolve_holder
from crossfill.kinds.perps.client import PerpsClient, PerpsPort, PerpsState
from crossfill.kinds.perps.config import PerpsExchangeConfig
from crossfill.kinds.perps.inventory import PerpsInventory
from crossfill.kinds.svm.client import SvmClient, SvmPort
from crossfill.kinds.svm.config import SvmChainConfig
from crossfill.kinds.svm.follower import SvmChainState, SvmFollower
from crossfill.kinds.svm.keys import DevnetSvmKeys
from crossfill.loops import stop_tasks
from crossfill.metrics import Metrics
from crossfill.settings import Settings
from crossfill.store import chain_controls
from crossfill.store.db import DATABASE_FAILURES, create_engine, session_factory
from crossfill.store.group_commit import GroupCommit
from crossfill.store.wal_checkpoints import BACKSTOP_PAGES, WalCheckpoints, sqlite_file
from crossfill.types import ChainId

log = structlog.get_logger(__name__)
OVERRIDES_REFRESH_SECONDS = 1.0


@dataclass
class ChainRuntime:
    config: ChainConfig
    client: EvmPort
    state: ChainState
    follower: ChainFollower
    positions: UserPositions


@dataclass
class SvmChainRuntime:
    config: SvmChainConfig
    client: SvmPort
    state: SvmChainState
    follower: SvmFollower


@dataclass
class PerpsRuntime:
    config: PerpsExchangeConfig
    client: PerpsPort
    state: PerpsState
    # The solver's exchange balances, read on demand for quotes.
    inventory: PerpsInventory


@dataclass
class Runtime:
    settings: Settings
    deployment: Deployment
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    chains: dict[ChainId, ChainRuntime]
    clock: Callable[[], float]
    metrics: Metrics
    # Operator overrides (`crossfill chains disable`), refreshed from the database each second.
    disabled_overrides: dict[int, bool] = field(default_factory=dict)
    svm_chains: dict[ChainId, SvmChainRuntime] = field(default_factory=dict)
    # The perps exchange (chain 1337), when the deployment has one.
    perps: PerpsRuntime | None = None
    # SQLite's log checkpointed off the commit path (None on PostgreSQL).
    wal_checkpoints: WalCheckpoints | None = None
    # The devnet SVM chain's keys, for `devnet-svm:ROLE` key references: given in devnet mode
    # by the command that runs it (`crossfill devnet`, `crossfill run`), never in production.
    devnet_svm_keys: DevnetSvmKeys | None = None
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)

    @cached_property
    def quote_rows(self) -> GroupCommit:
        """Quotes' request rows, committed in groups (see store.group_commit)."""
        return GroupCommit(self.engine)

    @cached_property
    def solver_account(self) -> LocalAccount:
        """The solver's key: signs fills, and quotes' `orderSignature`. Resolved on first use."""
        settings = self.settings
        return resolve_holder(
            self.deployment.solver,
            "solver",
            mode=settings.mode,
            keystore_password=settings.keystore_password,
        )

    def configured_disabled(self, chain_id: int) -> bool:
        """Whether the deployment file disables the chain (the operator may override it)."""
        svm = self.svm_chains.get(ChainId(chain_id))
        if self.perps is not None and chain_id == self.perps.config.id:
            return not self.perps.config.enabled
        if svm is not None:
            return svm.config.disabled
        return self.chains[ChainId(chain_id)].config.disabled

    def chain_disabled(self, chain_id: int) -> bool:
        return self.disabled_overrides.get(chain_id, self.configured_disabled(chain_id))

    async def refresh_overrides(self) -> None:
        async with self.sessions() as session:
            self.disabled_overrides = await chain_controls.disabled_overrides(session)

    async def _follow_overrides(self) -> None:
        while True:
            try:
                await self.refresh_overrides()
            except DATABASE_FAILURES as exc:
                # The database is away: keep the last overrides and read them again soon;
                # this task must outlive any outage (`crossfill chains disable` relies on it).
                log.warning("chain overrides not refreshed", error=str(exc))
            await asyncio.sleep(OVERRIDES_REFRESH_SECONDS)

    @classmethod
    def build(
        cls,
        settings: Settings,
        deployment: Deployment | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        devnet_svm_keys: DevnetSvmKeys | None = None,
    ) -> Runtime:
        deployment = deployment or load_deployment(settings.deployment_path, mode=settings.mode)
        database_file = sqlite_file(settings.database)
        wal_checkpoints = None if database_file is None else WalCheckpoints(database_file)
        engine = create_engine(
            settings.database,
            autocheckpoint_pages=None if wal_checkpoints is None else BACKSTOP_PAGES,
            timeout_seconds=settings.database_timeout_seconds,
        )
        metrics = Metrics(multiprocess_dir=settings.prometheus_multiproc_dir)
        solver = deployment.solver.address
        chains = {
            chain.id: _chain_runtime(chain, settings, solver, clock, metrics)
            for chain in deployment.chains
        }
        svm_chains = {
            chain.id: _svm_chain_runtime(chain, settings, clock) for chain in deployment.svm_chains
        }
        perps = None
        if deployment.perps is not None:
            config = deployment.perps
            client = PerpsClient(
                config.id, config.rpc_url, timeout_seconds=settings.rpc_timeout_seconds
            )
            perps = PerpsRuntime(
                config, client, PerpsState(config.id), PerpsInventory(client, config, clock)
            )
        return cls(
            settings,
            deployment,
            engine,
            session_factory(engine),
            chains,
            clock,
            metrics,
            svm_chains=svm_chains,
            perps=perps,
            wal_checkpoints=wal_checkpoints,
            devnet_svm_keys=devnet_svm_keys,
        )

    def start_wal_checkpoints(self) -> None:
        """SQLite: checkpoint the log on a thread of this process's own from now on."""
        if self.wal_checkpoints is not None:
            self.wal_checkpoints.start()

    async def start_followers(self) -> None:
        """Poll every chain once, then keep following: a process starts serving with chain
        state in hand (an unreachable chain costs one RPC timeout and is recorded as such)."""
        followers: list[ChainFollower | SvmFollower] = [
            *(chain.follower for chain in self.chains.values()),
            *(chain.follower for chain in self.svm_chains.values()),
        ]
        await asyncio.gather(*(follower.update() for follower in followers))
        self._tasks.append(asyncio.create_task(self._follow_overrides(), name="chain-overrides"))
        for follower in followers:
            name = f"head-follower-{follower.config.id}"
            self._tasks.append(asyncio.create_task(follower.run(), name=name))

    async def close(self) -> None:
        await stop_tasks(self._tasks)
        self._tasks.clear()
        clients: list[EvmPort | SvmPort | PerpsPort] = [
            *(chain.client for chain in self.chains.values()),
            *(chain.client for chain in self.svm_chains.values()),
            *((self.perps.client,) if self.perps is not None else ()),
        ]
        for client in clients:
            await client.close()
        if "quote_rows" in self.__dict__:  # created on first use
            await self.quote_rows.close()
        if self.wal_checkpoints is not None:
            await self.wal_checkpoints.stop()
        await self.engine.dispose()


def _chain_runtime(
    config: ChainConfig,
    settings: Settings,
    solver: str,
    clock: Callable[[], float],
    metrics: Metrics,
) -> ChainRuntime:
    client = EvmClient(
        config.id, config.rpc_url, timeout_seconds=settings.rpc_timeout_seconds, metrics=metrics
    )
    state = ChainState(
        chain_id=config.id,
        lag_threshold_seconds=config.block_lag_threshold_seconds,
        started_at=clock(),
    )
    subscription_url = config.head_subscription_url
    heads = (
        None
        if subscription_url is None or not settings.head_subscriptions
        else WebSocketHeads(
            config.id, subscription_url, timeout_seconds=settings.rpc_timeout_seconds
        )
    )
    follower = ChainFollower(
        client,
        state,
        config=config,
        solver=solver,
        tokens=tuple(currency.address for currency in config.erc20_currencies),
        interval_seconds=settings.head_poll_interval_seconds,
        clock=clock,
        metrics=metrics,
        heads=heads,
    )
    return ChainRuntime(config, client, state, follower, UserPositions(client, state))


def _svm_chain_runtime(
    config: SvmChainConfig, settings: Settings, clock: Callable[[], float]
) -> SvmChainRuntime:
    client = SvmClient(config.id, config.rpc_url, timeout_seconds=settings.rpc_timeout_seconds)
    state = SvmChainState(
        chain_id=config.id,
        lag_threshold_seconds=config.block_lag_threshold_seconds,
        started_at=clock(),
    )
    follower = SvmFollower(
        client,
        state,
        config=config,
        interval_seconds=settings.head_poll_interval_seconds,
        clock=clock,
    )
    return SvmChainRuntime(config, client, state, follower)
