"""What the inventory-bridge tests share: the main deployment's solver side of a move (the
origin chain followed once, the solver key's transaction manager on the main deployment's
database, `IntentsApiBridge` on the peer's URL), as a fresh process would hold it."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from crossfill.config import Deployment, RebalancingSettings
from crossfill.devnet import accounts
from crossfill.kinds.evm.config import evm_chain
from crossfill.kinds.evm.runtime import ChainRuntime, evm_chain_runtime
from crossfill.kinds.evm.txmanager import TxManager
from crossfill.metrics import Metrics
from crossfill.treasury.intents_api_bridge import IntentsApiBridge
from crossfill_client import AsyncClient
from tests.support.database import sessions_of, sqlite_url
from tests.support.service import service_settings

SOLVER = accounts.solver().address
SETTINGS = RebalancingSettings(bridge_url="http://127.0.0.1:1", bridge_backoff_seconds=0.2)
# The signer lease's holder: the same in every process of a test, as a restarted service's.
HOLDER = "rebalancer"


@dataclass
class SolverSide:
    chain: ChainRuntime
    txmanager: TxManager
    bridge: IntentsApiBridge


def main_database(home: Path) -> str:
    return sqlite_url(home / "main.db")


@asynccontextmanager
async def solver_side(
    deployment: Deployment, deployment_path: Path, peer_url: str, home: Path, origin: int
) -> AsyncIterator[SolverSide]:
    """A fresh process's view, on the main database in `home`: its own client of the
    `origin` chain, the solver key's transaction manager there, and a client of the peer."""
    config = evm_chain(deployment, origin)
    assert config is not None
    settings = service_settings(home, deployment_path)
    chain = evm_chain_runtime(config, settings, SOLVER, time.monotonic, Metrics())
    await chain.follower.update()
    async with sessions_of(main_database(home), migrated=True) as sessions:
        txmanager = TxManager(
            chain.client,
            chain.state,
            accounts.solver(),
            sessions,
            now=lambda: datetime.now(UTC),
            holder=HOLDER,
        )
        bridge = IntentsApiBridge(
            AsyncClient(peer_url, timeout=10), {origin: txmanager}, SOLVER, SETTINGS
        )
        try:
            yield SolverSide(chain, txmanager, bridge)
        finally:
            await bridge.aclose()
            await chain.client.close()
