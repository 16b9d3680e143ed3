"""The workers' CPU priority when they run apart from the API (`crossfill run --workers-only`).

On a host that serves the API beside the workers, a burst of deposits keeps the workers busy
for as long as its fills take (about 5 ms of CPU an order), and a quote arriving meanwhile
waits for a core behind them. Quotes are answered while a client waits; fills have a block's
time. A workers-only process therefore lowers its own priority (a `nice` increment), so the
kernel runs the API first when both want a core and the workers whenever it is idle; on a host
of their own the workers lose nothing. An unprivileged process can only lower its priority,
so it is the workers that move.
"""

from __future__ import annotations

import os

import structlog

log = structlog.get_logger(__name__)


def lower_cpu_priority(increment: int) -> int:
    """Lower this process's CPU priority by `increment` (0: leave it); its niceness now.

    Linux sets it for the calling thread, and threads inherit it from the thread that starts
    them: called first thing on the main thread, it holds for the workers' threads too."""
    if increment == 0:
        return os.nice(0)
    try:
        niceness = os.nice(increment)
    except OSError as exc:
        log.warning("CPU priority not lowered", increment=increment, error=str(exc))
        return os.nice(0)
    log.info("CPU priority lowered", niceness=niceness)
    return niceness
