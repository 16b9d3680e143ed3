"""An SVM chain live in this process: its client, its state and the follower that keeps it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from crossfill.kinds.port import LiveChain
from crossfill.kinds.svm.client import SvmClient, SvmPort
from crossfill.kinds.svm.config import SvmChainConfig
from crossfill.kinds.svm.follower import SvmChainState, SvmFollower
from crossfill.settings import Settings


@dataclass
class SvmChainRuntime(LiveChain[SvmChainConfig, SvmPort, SvmChainState]):
    follower: SvmFollower


def svm_chain_runtime(
    config: SvmChainConfig, settings: Settings, clock: Callable[[], float]
) -> SvmChainRuntime:
    client = SvmClient(config.id, config.rpc_url, timeout_seconds=settings.rpc_timeout_seconds)
    state = SvmChainState(
        chain_id=config.id,
        lag_threshold_seconds=config.block_lag_threshold_seconds,
        started_at=clock(),
    )
    follower = SvmFollower(
        client,
        state,
        config=config,
        interval_seconds=settings.head_poll_interval_seconds,
        clock=clock,
    )
    return SvmChainRuntime(config, client, state, follower)
