"""The service as separate processes on one PostgreSQL database, on a devnet's chains that the
bench runs itself: an API process (`crossfill api`) and worker processes (`crossfill run
--workers-only`), each of which can be killed, stopped and started again on its own; and which
of the workers signs on a chain (the holder of the solver key's signer lease there)."""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select

from crossfill.devnet.child_process import free_port
from crossfill.devnet.network import DevnetOptions, start_devnet
from crossfill.settings import Settings
from crossfill.store.tables import SignerLease
from tests.support.database import sessions_of
from tests.support.service import ServiceProcess


@dataclass
class Worker:
    """A `crossfill run --workers-only` process (its log: `service.log` in its own home)."""

    name: str
    process: ServiceProcess
    started_at: float = 0.0  # time.monotonic() when its latest run was started

    def start(self) -> None:
        self.started_at = time.monotonic()
        self.process.start()

    @property
    def pid(self) -> int:
        return self.process.pid


@dataclass(frozen=True)
class SplitService:
    api: ServiceProcess
    workers: list[Worker]
    database_url: str
    deployment_path: Path

    async def signer(self, chain_id: int, sender: str) -> Worker | None:
        """The running worker whose process holds `sender`'s signer lease on `chain_id`, if
        one does (the lease's holder names its process: host:pid:suffix)."""
        async with sessions_of(self.database_url) as sessions, sessions() as session:
            leases = await session.scalars(
                select(SignerLease).where(SignerLease.chain_id == chain_id)
            )
            holders = [lease.holder for lease in leases if lease.sender.lower() == sender.lower()]
        pids = {int(holder.split(":")[1]) for holder in holders}
        return next(
            (
                worker
                for worker in self.workers
                if worker.process.process is not None
                and worker.process.process.poll() is None
                and worker.pid in pids
            ),
            None,
        )


@contextlib.contextmanager
def split_service(
    database_url: str, *, workers: int = 2, block_time: float = 1
) -> Iterator[SplitService]:
    """Two anvil chains (`block_time`), then the workers started one after the other (the first
    migrates the database), then the API; everything stopped at the end."""
    with tempfile.TemporaryDirectory(prefix="crossfill-bench-") as directory:
        home = Path(directory)
        deployment_path = home / "deployment.toml"
        network = start_devnet(
            DevnetOptions(block_time=block_time), deployment_path=deployment_path, log_dir=home
        )
        settings = Settings(
            home=home,
            deployment_file=deployment_path,
            database_url=database_url,
            log_level="WARNING",
            rate_limit_anonymous_per_minute=0,
        )
        service = SplitService(
            ServiceProcess(settings, command=("api",)),
            [_worker(settings, f"worker-{index}") for index in range(1, workers + 1)],
            database_url,
            deployment_path,
        )
        try:
            for worker in service.workers:
                worker.start()
            service.api.start()
            yield service
        finally:
            service.api.stop()
            for worker in service.workers:
                worker.process.stop()
            network.stop()


def _worker(settings: Settings, name: str) -> Worker:
    home = settings.home / name
    home.mkdir()
    # Its worker name: started again after a crash, it takes its own leases over at once.
    own = settings.model_copy(update={"home": home, "worker_name": name})
    return Worker(name, ServiceProcess.workers_only(own, ops_port=free_port()))
