"""Block production lag: pure rule and the ChainState that applies it."""

from __future__ import annotations

from crossfill.domain.chain_health import is_block_production_lagging
from crossfill.kinds.evm.client import BlockHead
from crossfill.kinds.evm.state import ChainState
from crossfill.types import ChainId


def test_not_lagging_within_threshold() -> None:
    assert not is_block_production_lagging(
        last_advance_at=10, started_at=0, now=15, threshold_seconds=5
    )


def test_lagging_past_threshold() -> None:
    assert is_block_production_lagging(
        last_advance_at=10, started_at=0, now=15.01, threshold_seconds=5
    )


def test_chain_never_seen_counts_from_start() -> None:
    assert not is_block_production_lagging(
        last_advance_at=None, started_at=0, now=4, threshold_seconds=5
    )
    assert is_block_production_lagging(
        last_advance_at=None, started_at=0, now=6, threshold_seconds=5
    )


def test_no_threshold_means_never_lagging() -> None:
    assert not is_block_production_lagging(
        last_advance_at=None, started_at=0, now=10**9, threshold_seconds=None
    )


def _head(number: int, block_hash: str = "0xaa") -> BlockHead:
    return BlockHead(number=number, timestamp=1_700_000_000 + number, hash=block_hash)


def test_state_turns_lagging_when_head_stalls_and_recovers_on_new_block() -> None:
    state = ChainState(chain_id=ChainId(1), lag_threshold_seconds=2, started_at=0)
    state.record_head(_head(1), now=1)
    state.record_head(_head(1), now=2.5)  # same head polled again: no progress
    assert not state.lagging(now=2.9)
    assert state.lagging(now=3.5)
    state.record_head(_head(2), now=4)
    assert not state.lagging(now=4.5)


def test_reorged_head_at_same_height_counts_as_progress() -> None:
    state = ChainState(chain_id=ChainId(1), lag_threshold_seconds=2, started_at=0)
    state.record_head(_head(5, "0xaa"), now=1)
    state.record_head(_head(5, "0xbb"), now=3.5)
    assert not state.lagging(now=4)
