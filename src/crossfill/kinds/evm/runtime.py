"""An EVM chain live in this process: its client, its state, the follower that keeps the state,
and the users' balances and allowances read for quotes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from crossfill.kinds.evm.client import EvmClient
from crossfill.kinds.evm.config import ChainConfig
from crossfill.kinds.evm.follower import ChainFollower
from crossfill.kinds.evm.head_subscription import WebSocketHeads
from crossfill.kinds.evm.port import EvmPort
from crossfill.kinds.evm.positions import UserPositions
from crossfill.kinds.evm.state import ChainState
from crossfill.kinds.port import LiveChain
from crossfill.metrics import Metrics
from crossfill.settings import Settings


@dataclass
class ChainRuntime(LiveChain[ChainConfig, EvmPort, ChainState]):
    follower: ChainFollower
    positions: UserPositions


def evm_chain_runtime(
    config: ChainConfig,
    settings: Settings,
    solver: str,
    clock: Callable[[], float],
    metrics: Metrics,
) -> ChainRuntime:
    client = EvmClient(
        config.id, config.rpc_url, timeout_seconds=settings.rpc_timeout_seconds, metrics=metrics
    )
    state = ChainState(
        chain_id=config.id,
        lag_threshold_seconds=config.block_lag_threshold_seconds,
        started_at=clock(),
    )
    subscription_url = config.head_subscription_url
    heads = (
        None
        if subscription_url is None or not settings.head_subscriptions
        else WebSocketHeads(
            config.id, subscription_url, timeout_seconds=settings.rpc_timeout_seconds
        )
    )
    follower = ChainFollower(
        client,
        state,
        config=config,
        solver=solver,
        tokens=tuple(currency.address for currency in config.erc20_currencies),
        interval_seconds=settings.head_poll_interval_seconds,
        clock=clock,
        metrics=metrics,
        heads=heads,
    )
    return ChainRuntime(config, client, state, follower, UserPositions(client, state))
