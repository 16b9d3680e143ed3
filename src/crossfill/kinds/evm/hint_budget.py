"""What clients' deposit hints may cost the service: RPC calls per client per minute.

Each client (an API key, or an anonymous caller's address group) has a token bucket holding
up to a minute's calls and refilling continuously; every RPC call a hint makes takes one. A
hint whose client has nothing left is not looked up (a new one is refused, a kept one waits):
hints only hurry the indexer, whose scan finds every deposit anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

# Buckets kept at most; past it, full ones (nothing to remember) are dropped, and while
# none is full a new client's hints are refused until one refills.
MAX_CLIENTS = 10_000
# While every bucket is in use, they are looked over for full ones at most this often.
SWEEP_INTERVAL = timedelta(seconds=1)


class HintBudget:
    def __init__(self, calls_per_minute: int, *, now: Callable[[], datetime]) -> None:
        if calls_per_minute < 1:
            raise ValueError("a hint budget needs at least one call per minute")
        self.calls_per_minute = calls_per_minute
        self._now = now
        self._buckets: dict[str, tuple[float, datetime]] = {}
        self._swept_at: datetime | None = None

    def take(self, client: str) -> bool:
        """One RPC call for `client`'s hints; False (nothing taken) when its budget is spent."""
        now = self._now()
        tokens = self._tokens(client, now)
        if tokens < 1:
            return False
        if client not in self._buckets and not self._room():
            return False
        self._buckets[client] = (tokens - 1, now)
        return True

    def _tokens(self, client: str, now: datetime) -> float:
        kept = self._buckets.get(client)
        if kept is None:
            return float(self.calls_per_minute)
        tokens, at = kept
        refilled = (now - at).total_seconds() * self.calls_per_minute / 60
        return min(float(self.calls_per_minute), tokens + max(0.0, refilled))

    def _room(self) -> bool:
        if len(self._buckets) < MAX_CLIENTS:
            return True
        now = self._now()
        if self._swept_at is not None and now - self._swept_at < SWEEP_INTERVAL:
            return False
        self._swept_at = now
        full = [
            client for client in self._buckets if self._tokens(client, now) >= self.calls_per_minute
        ]
        for client in full:
            del self._buckets[client]
        return len(self._buckets) < MAX_CLIENTS
