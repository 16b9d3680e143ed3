"""A process that runs one tick of the rebalancer on the main deployment's database in HOME and
is SIGKILLed as the move it quoted and stored would be sent: what `test_rebalancer` resumes
from in the service started next on that database.

    python -m tests.e2e.rebalancer_process DEPLOYMENT HOME DATABASE_URL
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from crossfill.app.inventory import InventoryView
from crossfill.devnet.kinds import devnet_kinds
from crossfill.kinds.evm.workers import EvmWorkers
from crossfill.kinds.port import WorkerContext
from crossfill.runtime import Runtime
from crossfill.store.migrate import upgrade_async
from crossfill.treasury.bridge import BridgeQuote, SendOutcome
from crossfill.workers.runner import utc_now
from tests.support.service import service_settings


async def _killed_before_sending(deployment_path: Path, home: Path, database: str) -> None:
    settings = service_settings(home, deployment_path, database_url=database)
    await upgrade_async(settings.database)
    runtime = Runtime.build(settings, kinds=devnet_kinds())
    await runtime.start_followers()
    await InventoryView.of(runtime).refresh()
    context = WorkerContext(runtime.sessions, settings, "killed", utc_now, runtime.metrics)
    rebalancer = EvmWorkers.build(runtime, context).rebalancer
    assert rebalancer is not None

    async def killed(_quote: BridgeQuote) -> SendOutcome:
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("not reached")

    rebalancer.bridge.send = killed  # type: ignore[method-assign,assignment]
    await rebalancer.tick()
    raise AssertionError("the tick planned no move")


if __name__ == "__main__":
    asyncio.run(_killed_before_sending(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]))
