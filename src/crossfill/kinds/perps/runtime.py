"""The perps exchange live in this process: its client, what `/chains` shows of it, and the
solver's balances there, read on demand for quotes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from crossfill.kinds.perps.client import PerpsClient, PerpsPort, PerpsState
from crossfill.kinds.perps.config import PerpsExchangeConfig
from crossfill.kinds.perps.inventory import PerpsInventory
from crossfill.kinds.port import LiveChain
from crossfill.settings import Settings


@dataclass
class PerpsRuntime(LiveChain[PerpsExchangeConfig, PerpsPort, PerpsState]):
    inventory: PerpsInventory


def perps_runtime(
    config: PerpsExchangeConfig, settings: Settings, clock: Callable[[], float]
) -> PerpsRuntime:
    client = PerpsClient(config.id, config.rpc_url, timeout_seconds=settings.rpc_timeout_seconds)
    return PerpsRuntime(
        config, client, PerpsState(config.id), PerpsInventory(client, config, clock)
    )
