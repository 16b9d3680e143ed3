"""An SVM chain live in this process: its client, its state and the follower that keeps it."""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.kinds.port import ChainContext, InventoryCurrency, LiveChain
from crossfill.kinds.svm.client import SvmClient, SvmPort
from crossfill.kinds.svm.config import SvmChainConfig
from crossfill.kinds.svm.follower import SvmChainState, SvmFollower
from crossfill.kinds.timed_inventory import TimedInventory


def _exact(address: str) -> str:
    """An SVM currency's key is its address as is: base58 is case-sensitive."""
    return address


@dataclass
class SvmChainRuntime(LiveChain[SvmChainConfig, SvmPort, SvmChainState]):
    follower: SvmFollower
    # The vault's reserved inventory: its balances as the follower reads them, less what the
    # orders in flight to the chain commit.
    inventory: TimedInventory


def svm_chain_runtime(config: SvmChainConfig, context: ChainContext) -> SvmChainRuntime:
    client = SvmClient.serving(config, context.settings)
    state = SvmChainState(
        chain_id=config.id,
        lag_threshold_seconds=config.block_lag_threshold_seconds,
        started_at=context.clock(),
    )
    currencies = [InventoryCurrency(c.address, c.symbol, c.decimals) for c in config.currencies]
    inventory = TimedInventory(currencies, context.clock, key=_exact)
    follower = SvmFollower(
        client,
        state,
        config=config,
        interval_seconds=context.settings.head_poll_interval_seconds,
        clock=context.clock,
        metrics=context.metrics,
        on_read=inventory.read,
    )
    return SvmChainRuntime(config, client, state, follower, inventory)
