"""The service process: the HTTP API over a runtime, with this process's workers or without
(an API-only replica). The composition root that `crossfill run` and the tests use."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from fastapi import FastAPI

from crossfill.api.app import create_app
from crossfill.runtime import Runtime
from crossfill.workers.runner import Workers


class ProcessWorkers:
    """The workers of this process, started and stopped with its API (`api.app.Background`)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.workers: Workers | None = None

    async def start(self) -> None:
        workers = Workers.build(self.runtime)
        await workers.recover(self.runtime)
        workers.start(self.runtime)
        await workers.listen_for_hints(self.runtime.settings.database)
        self.workers = workers

    async def stop(self) -> None:
        if self.workers is not None:
            await self.workers.stop()
            self.workers = None

    def hint(self, chain_id: int, tx_hash: str, client: str) -> bool:
        return self.workers is not None and self.workers.hint(chain_id, tx_hash, client)


def build_service(
    runtime: Runtime,
    *,
    run_workers: bool,
    follow_heads: bool = True,
    wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> FastAPI:
    """The API; with `run_workers`, this process also runs the indexers, solvers, refunders,
    sponsor collectors and the webhook dispatcher (the embedded default)."""
    background = ProcessWorkers(runtime) if run_workers else None
    return create_app(
        runtime, follow_heads=follow_heads, background=background, wall_clock=wall_clock
    )
