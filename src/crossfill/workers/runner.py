"""Composition root of the workers: each kind's own (`kinds.port.ChainKind.workers`) and the
webhook dispatcher, built from the runtime; the recovery of a crashed predecessor's leases, and
the hand-over of this process's own when it stops."""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import structlog

from crossfill.kinds.port import KindWorkers, WorkerContext
from crossfill.loops import TRANSIENT, stop_tasks
from crossfill.runtime import Runtime
from crossfill.store import deposit_hints, outbox, requests, signer_leases
from crossfill.store.db import is_sqlite
from crossfill.workers.books_keeper import BooksKeeper
from crossfill.workers.genesis import bind_state_to_chains
from crossfill.workers.webhooks import WebhookDispatcher

log = structlog.get_logger(__name__)
# What of the host's name a lease's owner carries: with the pid, a suffix and a worker name (at
# most 32), it fits `requests.lease_owner` (100).
HOST_IN_OWNER = 40


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Workers:
    context: WorkerContext
    webhooks: WebhookDispatcher
    # Each kind's workers (`kinds.port.ChainKind.workers`), in the registry's order.
    kinds: list[KindWorkers]
    # One per chain of every kind that keeps books: its books reconciled with the chain.
    books_keepers: list[BooksKeeper] = field(default_factory=list)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    # Removals of the workers' head listeners (see `start`).
    _unlisten: list[Callable[[], None]] = field(default_factory=list)

    @classmethod
    def build(cls, runtime: Runtime) -> Workers:
        settings = runtime.settings
        # This process among every other (a pid alone may come back after a reboot), and the
        # worker it is configured as (`store.signer_leases`); within a request's `lease_owner`.
        host = socket.gethostname()[:HOST_IN_OWNER]
        owner = signer_leases.holder_of(
            f"{host}:{os.getpid()}:{uuid.uuid4().hex[:8]}", settings.worker_name
        )
        context = WorkerContext(runtime.sessions, settings, owner, utc_now, runtime.metrics)
        # Woken at once by events this process commits; the interval catches retries coming
        # due and events other processes wrote.
        webhooks = WebhookDispatcher(
            runtime.sessions,
            settings,
            now=utc_now,
            interval_seconds=settings.worker_interval_seconds,
            metrics=runtime.metrics,
        )
        books_keepers = [
            BooksKeeper(reader, runtime.sessions, now=utc_now, metrics=runtime.metrics)
            for chain in runtime.kind_chains.values()
            if (reader := chain.books()) is not None
        ]
        kinds = [kind.workers(runtime, context) for kind in runtime.kinds]
        return cls(context, webhooks, kinds, books_keepers)

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
        for workers in self.kinds:
            self._unlisten.extend(workers.listen())
            for worker in workers.loops():
                self._tasks.append(asyncio.create_task(worker.run(), name=worker.name))
        for keeper in self.books_keepers:
            self._tasks.append(asyncio.create_task(keeper.run(), name=keeper.name))
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
        await self._hand_over()

    async def _hand_over(self) -> None:
        """With every worker stopped, free this process's signer and request leases: a standby
        signs and claims at once instead of when they would have lapsed. Whatever was signed
        is in the journal, where the next holder finds it."""
        context = self.context
        try:
            async with context.sessions() as session, session.begin():
                await signer_leases.release_held(session, context.owner, now=context.now())
                await requests.release_owned(session, context.owner)
        except TRANSIENT as exc:  # they lapse on their own
            log.warning("leases not handed over at stop", error=str(exc))

    def hint(self, chain_id: int, tx_hash: str, client: str) -> bool:
        return any(workers.hint(chain_id, tx_hash, client) for workers in self.kinds)
