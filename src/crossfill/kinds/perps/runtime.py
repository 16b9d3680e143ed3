"""The perps exchange live in this process: its client, what `/chains` shows of it, and the
solver's balances there, read on demand for quotes."""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.kinds.perps.client import PerpsClient, PerpsPort, PerpsState
from crossfill.kinds.perps.config import PerpsExchangeConfig
from crossfill.kinds.perps.inventory import PerpsInventory
from crossfill.kinds.port import ChainContext, LiveChain


@dataclass
class PerpsRuntime(LiveChain[PerpsExchangeConfig, PerpsPort, PerpsState]):
    inventory: PerpsInventory


def perps_runtime(config: PerpsExchangeConfig, context: ChainContext) -> PerpsRuntime:
    client = PerpsClient.serving(config, context.settings)
    inventory = PerpsInventory(client, config, context.clock)
    return PerpsRuntime(config, client, PerpsState(config.id), inventory)
