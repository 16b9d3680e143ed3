"""When a chain counts as lagging: no new block for longer than its threshold; and what its
follower records of its progress (`HeadProgress`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from crossfill.types import ChainId


def is_block_production_lagging(
    *,
    last_advance_at: float | None,
    started_at: float,
    now: float,
    threshold_seconds: float | None,
) -> bool:
    """True when the head has not moved for more than `threshold_seconds`.

    Times are from one monotonic clock. Before the first block is seen, the wait counts from
    when watching started, so a chain that never answers also turns lagging. A chain without a
    threshold (automine devnets make blocks only on demand) is never lagging.
    """
    if threshold_seconds is None:
        return False
    reference = last_advance_at if last_advance_at is not None else started_at
    return now - reference > threshold_seconds


@dataclass
class HeadProgress:
    """A followed chain's progress as its follower records it, whatever its kind: when its head
    last moved, its last good read and its last failure; read by the API and the workers."""

    chain_id: ChainId
    lag_threshold_seconds: float | None
    started_at: float
    last_advance_at: float | None = None
    last_poll_ok_at: float | None = None
    last_error: str | None = field(default=None, repr=False)

    def record_read(self, *, advanced: bool, now: float) -> None:
        """A good read of the chain's head; `advanced`: the head is not the one read before."""
        if advanced:
            self.last_advance_at = now
        self.last_poll_ok_at = now
        self.last_error = None

    def lagging(self, now: float) -> bool:
        return is_block_production_lagging(
            last_advance_at=self.last_advance_at,
            started_at=self.started_at,
            now=now,
            threshold_seconds=self.lag_threshold_seconds,
        )
