"""When a chain counts as lagging: no new block for longer than its threshold."""

from __future__ import annotations


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
