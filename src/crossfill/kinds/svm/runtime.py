"""An SVM chain live in this process: its client, its state and the follower that keeps it."""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.kinds.port import ChainContext, LiveChain
from crossfill.kinds.svm.client import SvmClient, SvmPort
from crossfill.kinds.svm.config import SvmChainConfig
from crossfill.kinds.svm.follower import SvmChainState, SvmFollower


@dataclass
class SvmChainRuntime(LiveChain[SvmChainConfig, SvmPort, SvmChainState]):
    follower: SvmFollower


def svm_chain_runtime(config: SvmChainConfig, context: ChainContext) -> SvmChainRuntime:
    client = SvmClient.serving(config, context.settings)
    state = SvmChainState(
        chain_id=config.id,
        lag_threshold_seconds=config.block_lag_threshold_seconds,
        started_at=context.clock(),
    )
    follower = SvmFollower(
        client,
        state,
        config=config,
        interval_seconds=context.settings.head_poll_interval_seconds,
        clock=context.clock,
        metrics=context.metrics,
    )
    return SvmChainRuntime(config, client, state, follower)
