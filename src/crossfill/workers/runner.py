"""Composition root of the workers: an indexer, a solver, a refunder, a sponsor collector, an
app-fee payer and a deposit-address sweeper per EVM chain, a gasless executor per EVM chain and
sponsor, the webhook dispatcher, and every other kind's own workers, built from the runtime."""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from eth_account.signers.local import LocalAccount
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.app.quotes import arrival_rows
from crossfill.config.secrets import resolve_holder
from crossfill.kinds.port import NamedWorker, WorkerContext
from crossfill.loops import stop_tasks
from crossfill.runtime import Runtime
from crossfill.store import deposit_hints, outbox, requests, signer_leases
from crossfill.store.db import is_sqlite
from crossfill.store.tables import Request
from crossfill.types import NATIVE_EVM_ADDRESS, ChainId
from crossfill.workers.app_fee_payer import AppFeePayer
from crossfill.workers.deposit_addresses import DepositAddressSweeper
from crossfill.workers.gasless_executor import GaslessExecutor
from crossfill.workers.genesis import bind_state_to_chains
from crossfill.workers.hint_watch import Hint
from crossfill.workers.indexer import Claim, Indexer
from crossfill.workers.mined_watch import MinedWatch
from crossfill.workers.permit_depositor import PermitDepositor
from crossfill.workers.refunder import Refunder
from crossfill.workers.solver import Solver
from crossfill.workers.sponsor_collector import SponsorCollector
from crossfill.workers.txmanager import TxManager
from crossfill.workers.webhooks import WebhookDispatcher

T = TypeVar("T")


def utc_now() -> datetime:
    return datetime.now(UTC)


def _hand_over(solvers: dict[ChainId, Solver], chain_id: int, request_id: str) -> None:
    solver = solvers.get(ChainId(chain_id))
    if solver is not None:
        solver.take(request_id)


async def _claim_pending(
    solvers: dict[ChainId, Solver], session: AsyncSession, request: Request
) -> Claim | None:
    solver = solvers.get(ChainId(request.destination_chain_id))
    return None if solver is None else await solver.claim_pending(session, request)


@dataclass
class Workers:
    indexers: dict[ChainId, Indexer]
    solvers: dict[ChainId, Solver]
    refunders: dict[ChainId, Refunder]
    webhooks: WebhookDispatcher
    sponsor_collectors: dict[ChainId, SponsorCollector]
    app_fee_payers: dict[ChainId, AppFeePayer]
    permit_depositors: dict[ChainId, PermitDepositor]
    gasless_executors: list[GaslessExecutor] = field(default_factory=list)
    deposit_address_sweepers: dict[ChainId, DepositAddressSweeper] = field(default_factory=dict)
    # Every kind's own workers (`kinds.port.KindChain.workers`).
    kind_workers: list[NamedWorker] = field(default_factory=list)
    # One per signer and chain: its mined transactions kept in the chain until final.
    mined_watches: list[MinedWatch] = field(default_factory=list)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    # Removals of the workers' head listeners (see `start`).
    _unlisten: list[Callable[[], None]] = field(default_factory=list)

    @classmethod
    def build(cls, runtime: Runtime) -> Workers:
        settings, deployment = runtime.settings, runtime.deployment
        solver_account = runtime.solver_account
        allocator = resolve_holder(
            deployment.allocator,
            "allocator",
            mode=settings.mode,
            keystore_password=settings.keystore_password,
        )
        # This process among every other (a pid alone may come back after a reboot).
        owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        # One transaction manager per chain for the solver key: fills, refunds and app-fee
        # payouts share nonces, and one process at a time signs with it (the signer lease,
        # held as `owner`). The followers read the key's balance: what it cannot pay for is
        # never signed.
        txmanagers = {
            chain_id: TxManager(
                chain.client,
                chain.state,
                solver_account,
                runtime.sessions,
                now=utc_now,
                holder=owner,
                funds=functools.partial(chain.state.solver_balance, NATIVE_EVM_ADDRESS),
            )
            for chain_id, chain in runtime.chains.items()
        }
        interval = settings.worker_interval_seconds
        indexers = {
            chain_id: Indexer(
                chain,
                runtime.sessions,
                now=utc_now,
                interval_seconds=interval,
                metrics=runtime.metrics,
                hint_calls_per_client_per_minute=settings.hint_rpc_calls_per_client_per_minute,
            )
            for chain_id, chain in runtime.chains.items()
        }
        solvers = {
            chain_id: Solver(
                chain,
                runtime.sessions,
                txmanagers[chain_id],
                now=utc_now,
                interval_seconds=interval,
                owner=owner,
                metrics=runtime.metrics,
            )
            for chain_id, chain in runtime.chains.items()
        }

        def journalled(worker: Callable[..., T], *signers: LocalAccount) -> dict[ChainId, T]:
            """One per chain of a worker sending through that chain's journal."""
            return {
                chain_id: worker(
                    chain,
                    runtime.sessions,
                    txmanagers[chain_id],
                    *signers,
                    now=utc_now,
                    interval_seconds=interval,
                )
                for chain_id, chain in runtime.chains.items()
            }

        refunders = journalled(Refunder, allocator)
        for indexer in indexers.values():
            indexer.on_pending = lambda chain_id, request_id: _hand_over(
                solvers, chain_id, request_id
            )
            indexer.claim_pending = functools.partial(_claim_pending, solvers)
        # Woken at once by events this process commits; the interval catches retries coming
        # due and events other processes wrote.
        webhooks = WebhookDispatcher(
            runtime.sessions,
            settings,
            now=utc_now,
            interval_seconds=interval,
            metrics=runtime.metrics,
        )
        collectors = journalled(SponsorCollector)
        depositors = journalled(PermitDepositor)
        payers = journalled(AppFeePayer, allocator)
        sweepers = {
            chain_id: DepositAddressSweeper(
                chain,
                runtime.sessions,
                txmanagers[chain_id],
                now=utc_now,
                interval_seconds=interval,
                reprice=functools.partial(arrival_rows, runtime),
                metrics=runtime.metrics,
            )
            for chain_id, chain in runtime.chains.items()
        }
        context = WorkerContext(runtime.sessions, settings, owner, utc_now, runtime.metrics)
        kind_workers = [
            worker for chain in runtime.kind_chains.values() for worker in chain.workers(context)
        ]
        gasless_executors = _gasless_executors(runtime, owner)
        mined_watches = [
            MinedWatch(
                worker.chain, worker.txmanager, interval_seconds=interval, metrics=runtime.metrics
            )
            for worker in (*solvers.values(), *gasless_executors)
        ]
        return cls(
            indexers,
            solvers,
            refunders,
            webhooks,
            collectors,
            payers,
            depositors,
            gasless_executors=gasless_executors,
            mined_watches=mined_watches,
            deposit_address_sweepers=sweepers,
            kind_workers=kind_workers,
        )

    async def recover(self, runtime: Runtime) -> None:
        """At start: the stored state must belong to these chains (see `genesis`); with SQLite
        this is the only worker process, so leases of a crashed predecessor are freed now
        instead of when they expire."""
        await bind_state_to_chains(runtime, now=lambda: datetime.now(UTC))
        if is_sqlite(runtime.settings.database):
            async with runtime.sessions() as session, session.begin():
                await requests.release_leases(session)
                await outbox.release_leases(session)
                await signer_leases.release_all(session)

    def start(self, runtime: Runtime) -> None:
        for chain_id, chain in runtime.chains.items():
            # Each new head wakes the chain's indexer (deposits) and solver (fills mined); the
            # deposit-address sweeper once the indexer's scan of it is done (the fill path
            # first on the database).
            indexer = self.indexers[chain_id]
            self._unlisten.append(chain.follower.on_new_head(indexer.new_head))
            self._unlisten.append(chain.follower.on_new_head(self.solvers[chain_id].new_head))
            sweeper = self.deposit_address_sweepers.get(chain_id)
            if sweeper is not None:
                indexer.on_scanned = sweeper.new_head
        for watch in self.mined_watches:
            self._unlisten.append(watch.chain.follower.on_new_head(watch.new_head))
            self._tasks.append(asyncio.create_task(watch.run(), name=watch.name))
        per_chain: list[tuple[str, dict[ChainId, Any]]] = [
            ("indexer", self.indexers),
            ("solver", self.solvers),
            ("refunder", self.refunders),
            ("sponsor-collector", self.sponsor_collectors),
            ("app-fee-payer", self.app_fee_payers),
            ("permit-depositor", self.permit_depositors),
            ("deposit-addresses", self.deposit_address_sweepers),
        ]
        for name, workers in per_chain:
            for chain_id, worker in workers.items():
                self._tasks.append(asyncio.create_task(worker.run(), name=f"{name}-{chain_id}"))
        for chain_id, sweeper in self.deposit_address_sweepers.items():
            traces = sweeper.run_traces()
            self._tasks.append(
                asyncio.create_task(traces, name=f"deposit-address-traces-{chain_id}")
            )
        for executor in self.gasless_executors:
            self._tasks.append(asyncio.create_task(executor.run(), name=executor.name))
        for worker in self.kind_workers:
            self._tasks.append(asyncio.create_task(worker.run(), name=worker.name))
        self._tasks.append(asyncio.create_task(self.webhooks.run(), name="webhooks"))

    async def listen_for_hints(self, database_url: str) -> None:
        """Hints that API replicas forward (see store.deposit_hints) reach these indexers."""
        listening = deposit_hints.listen(database_url, self.hint)
        self._tasks.append(asyncio.create_task(listening, name="deposit-hints-listen"))

    async def stop(self) -> None:
        for unlisten in self._unlisten:
            unlisten()
        self._unlisten.clear()
        await stop_tasks(self._tasks)
        self._tasks.clear()

    def hint(self, chain_id: int, tx_hash: str, client: str) -> bool:
        indexer = self.indexers.get(ChainId(chain_id))
        if indexer is None:
            return False
        return indexer.hint(Hint(tx_hash, client))


def _gasless_executors(runtime: Runtime, owner: str) -> list[GaslessExecutor]:
    """One per chain and gas sponsor, each with the sponsor's own transaction manager (its
    nonces, its signer lease)."""
    settings = runtime.settings
    executors = []
    for index, holder in enumerate(runtime.deployment.gasless.sponsors):
        account = resolve_holder(
            holder,
            f"gasless.sponsors[{index}]",
            mode=settings.mode,
            keystore_password=settings.keystore_password,
        )
        for chain in runtime.chains.values():
            txmanager = TxManager(
                chain.client, chain.state, account, runtime.sessions, now=utc_now, holder=owner
            )
            executors.append(
                GaslessExecutor(
                    chain,
                    runtime.sessions,
                    txmanager,
                    now=utc_now,
                    interval_seconds=settings.worker_interval_seconds,
                )
            )
    return executors
