"""Waiting for something a service or a chain does in its own time."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(predicate: Callable[[], bool], *, timeout: float, interval: float = 0.1) -> bool:
    """True as soon as `predicate` is; its last answer once `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
