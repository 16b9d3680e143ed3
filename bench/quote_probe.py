"""A few quotes a second from a thread of its own, through a whole run: each latency kept with
the moment its quote was due (`time.perf_counter()`), so that the quotes of a window (idle,
during a burst) can be told apart afterwards. Open loop: a quote answered late delays the next
one's send, not its due time, so falling behind shows in the latencies."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass
class QuoteProbe:
    base_url: str
    body: dict[str, Any]
    rate: float  # quotes a second
    # (due, latency) of every quote answered
    answered: list[tuple[float, float]] = field(default_factory=list)
    refused: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> QuoteProbe:
        self._thread = threading.Thread(target=self._run, name="quote-probe", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def between(self, start: float, end: float) -> list[float]:
        """The latencies of the quotes due within [start, end]."""
        return [latency for due, latency in list(self.answered) if start <= due <= end]

    def _run(self) -> None:
        with httpx.Client(base_url=self.base_url, timeout=30) as client:
            due = time.perf_counter()
            while not self._stop.wait(max(0.0, due - time.perf_counter())):
                reply = client.post("/quote/v2", json=self.body)
                if reply.status_code == 200:
                    self.answered.append((due, time.perf_counter() - due))
                else:
                    self.refused += 1
                due += 1 / self.rate
