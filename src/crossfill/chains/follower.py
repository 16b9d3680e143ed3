"""Head follower: polls a chain's latest block into its ChainState."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import structlog

from crossfill.chains.evm import EvmClient
from crossfill.chains.state import ChainState
from crossfill.errors import ChainError

log = structlog.get_logger(__name__)


class HeadFollower:
    def __init__(
        self,
        client: EvmClient,
        state: ChainState,
        *,
        interval_seconds: float,
        clock: Callable[[], float],
    ) -> None:
        self.client = client
        self.state = state
        self.interval_seconds = interval_seconds
        self.clock = clock

    async def update(self) -> None:
        """One poll; a failing RPC is recorded, never raised, so the loop keeps going."""
        try:
            head = await self.client.head()
        except ChainError as exc:
            if self.state.last_error is None:
                log.warning("chain head poll failed", chain_id=self.state.chain_id, error=str(exc))
            self.state.record_error(str(exc))
            return
        self.state.record_head(head, self.clock())

    async def run(self) -> None:
        while True:
            await self.update()
            await asyncio.sleep(self.interval_seconds)
