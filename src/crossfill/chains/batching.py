"""Whether a chain's endpoint takes JSON-RPC batches.

Every read of the chain client is a batch: one round trip, answered by one node. Some
providers take no batches, or none as large as a chain poll, and refuse them as a whole
(`transport.BatchRefused`). Until an endpoint refuses one, calls go in batches; after, one by
one, and the log scan goes block by block (`EvmClient.scan`). A batch is tried again after a
while, since a refusal may have been a limit that has passed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import structlog

log = structlog.get_logger(__name__)
RETRY_BATCHES_AFTER_SECONDS = 600.0


@dataclass
class Batching:
    clock: Callable[[], float] = time.monotonic
    retry_after_seconds: float = RETRY_BATCHES_AFTER_SECONDS
    _refused_until: float = float("-inf")

    def allowed(self) -> bool:
        return self.clock() >= self._refused_until

    def refused(self) -> None:
        """The endpoint refused a batch: calls go one by one for a while."""
        self._refused_until = self.clock() + self.retry_after_seconds

    def note(self, refusal: Exception, **named: object) -> None:
        """`refused`, and logged with what `named` says of the endpoint (its chain...)."""
        self.refused()
        log.warning(
            "the chain's endpoint refuses JSON-RPC batches: calls go one by one",
            refusal=str(refusal),
            batches_tried_again_in_seconds=self.retry_after_seconds,
            **named,
        )
