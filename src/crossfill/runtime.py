"""Composition root: builds every long-lived component from settings and the deployment."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar, cast

import httpx
import structlog
from eth_account.signers.local import LocalAccount
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from crossfill.config import Deployment, load_deployment
from crossfill.config.secrets import resolve_holder
from crossfill.kinds.port import ChainContext, ChainKind, KindChain
from crossfill.loops import stop_tasks
from crossfill.metrics import Metrics
from crossfill.settings import Settings
from crossfill.store import chain_controls
from crossfill.store.db import DATABASE_FAILURES, create_engine, session_factory
from crossfill.store.group_commit import GroupCommit
from crossfill.store.solvers import SolverBook
from crossfill.store.wal_checkpoints import BACKSTOP_PAGES, WalCheckpoints, sqlite_file
from crossfill.types import ChainId

log = structlog.get_logger(__name__)
OVERRIDES_REFRESH_SECONDS = 1.0
KindChainT = TypeVar("KindChainT", bound=KindChain)
ViewT = TypeVar("ViewT")


@dataclass
class Runtime:
    settings: Settings
    deployment: Deployment
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    # The kinds of chain served, and every chain of theirs (see `kinds.port`), in that order.
    kinds: tuple[ChainKind, ...]
    kind_chains: dict[ChainId, KindChain]
    clock: Callable[[], float]
    metrics: Metrics
    # Operator overrides (`crossfill chains disable`), refreshed from the database each second.
    disabled_overrides: dict[int, bool] = field(default_factory=dict)
    # SQLite's log checkpointed off the commit path (None on PostgreSQL).
    wal_checkpoints: WalCheckpoints | None = None
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _views: dict[type[Any], Mapping[ChainId, Any]] = field(default_factory=dict)

    def chains_of(
        self, chain_type: type[KindChainT], view: Callable[[KindChainT], ViewT]
    ) -> Mapping[ChainId, ViewT]:
        """The chains of one kind (those whose `KindChain` is a `chain_type`), each as `view`
        shows it, by id; built once (a kind gives the same view each time)."""
        found = self._views.get(chain_type)
        if found is None:
            found = self._views[chain_type] = {
                chain_id: view(chain)
                for chain_id, chain in self.kind_chains.items()
                if isinstance(chain, chain_type)
            }
        return cast(Mapping[ChainId, ViewT], found)

    @cached_property
    def quote_rows(self) -> GroupCommit:
        """Quotes' request rows, committed in groups (see store.group_commit)."""
        return GroupCommit(self.engine)

    @cached_property
    def solver_book(self) -> SolverBook:
        """The external solvers registered, and their bonds, as this process last read them."""
        return SolverBook(self.sessions, clock=self.clock)

    @cached_property
    def rfq_http(self) -> httpx.AsyncClient:
        """Asks external solvers for bids (`app.rfq`); each auction bounds its own time."""
        return httpx.AsyncClient(
            follow_redirects=False,
            limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
        )

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
        return self.kind_chains[ChainId(chain_id)].configured_disabled

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
        kinds: Sequence[ChainKind],
        clock: Callable[[], float] = time.monotonic,
    ) -> Runtime:
        deployment = deployment or load_deployment(
            settings.deployment_path,
            mode=settings.mode,
            sections=[kind.config_section for kind in kinds],
        )
        database_file = sqlite_file(settings.database)
        wal_checkpoints = None if database_file is None else WalCheckpoints(database_file)
        engine = create_engine(
            settings.database,
            autocheckpoint_pages=None if wal_checkpoints is None else BACKSTOP_PAGES,
            timeout_seconds=settings.database_timeout_seconds,
        )
        metrics = Metrics(multiprocess_dir=settings.prometheus_multiproc_dir)
        context = ChainContext(deployment, settings, clock, metrics)
        kind_chains = {chain.chain_id: chain for kind in kinds for chain in kind.chains(context)}
        return cls(
            settings,
            deployment,
            engine,
            session_factory(engine),
            tuple(kinds),
            kind_chains,
            clock,
            metrics,
            wal_checkpoints=wal_checkpoints,
        )

    def start_wal_checkpoints(self) -> None:
        """SQLite: checkpoint the log on a thread of this process's own from now on."""
        if self.wal_checkpoints is not None:
            self.wal_checkpoints.start()

    async def start_followers(self) -> None:
        """Read every chain once, then keep following: a process starts serving with chain
        state in hand (an unreachable chain costs one RPC timeout and is recorded as such)."""
        chains = self.kind_chains.values()
        await asyncio.gather(*(chain.follow_once() for chain in chains))
        self._tasks.append(asyncio.create_task(self._follow_overrides(), name="chain-overrides"))
        for chain in chains:
            following = chain.following()
            if following is not None:
                name = f"head-follower-{chain.chain_id}"
                self._tasks.append(asyncio.create_task(following, name=name))

    async def close(self) -> None:
        await stop_tasks(self._tasks)
        self._tasks.clear()
        for chain in self.kind_chains.values():
            await chain.close()
        if "quote_rows" in self.__dict__:  # created on first use
            await self.quote_rows.close()
        if "rfq_http" in self.__dict__:
            await self.rfq_http.aclose()
        if self.wal_checkpoints is not None:
            await self.wal_checkpoints.stop()
        await self.engine.dispose()
