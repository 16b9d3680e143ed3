"""SVM chain follower: polls block height and the solver vault's balances into its state."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog
from solders.pubkey import Pubkey

from crossfill.domain.chain_health import is_block_production_lagging
from crossfill.errors import ChainError
from crossfill.kinds.svm.client import SvmPort
from crossfill.kinds.svm.config import SvmChainConfig
from crossfill.types import ChainId

log = structlog.get_logger(__name__)


@dataclass
class SvmChainState:
    """Written only by the chain's follower; read by the API and workers."""

    chain_id: ChainId
    lag_threshold_seconds: float | None
    started_at: float
    block_height: int | None = None
    last_advance_at: float | None = None
    last_poll_ok_at: float | None = None
    last_error: str | None = field(default=None, repr=False)
    # Currency address (exact base58) -> the solver vault's balance.
    solver_balances: dict[str, int] = field(default_factory=dict)

    def record_height(self, height: int, now: float) -> None:
        if height != self.block_height:
            self.last_advance_at = now
        self.block_height = height
        self.last_poll_ok_at = now
        self.last_error = None

    def lagging(self, now: float) -> bool:
        return is_block_production_lagging(
            last_advance_at=self.last_advance_at,
            started_at=self.started_at,
            now=now,
            threshold_seconds=self.lag_threshold_seconds,
        )


class SvmFollower:
    def __init__(
        self,
        client: SvmPort,
        state: SvmChainState,
        *,
        config: SvmChainConfig,
        interval_seconds: float,
        clock: Callable[[], float],
    ) -> None:
        self.client = client
        self.state = state
        self.config = config
        self.interval_seconds = interval_seconds
        self.clock = clock

    async def update(self) -> None:
        """One poll; a failure is recorded, never raised, so the loop goes on."""
        vault = Pubkey.from_string(self.config.solver.address)
        try:
            height = await self.client.block_height()
            balances = {self.config.native_currency.address: await self.client.balance(vault)}
            for token in self.config.token_currencies:
                mint = Pubkey.from_string(token.address)
                balances[token.address] = await self.client.token_balance(vault, mint)
        except ChainError as exc:
            if self.state.last_error is None:
                log.warning("svm chain poll failed", chain_id=self.state.chain_id, error=str(exc))
            self.state.last_error = str(exc)
            return
        except Exception as exc:  # an answer nothing here expected: recorded like a failure
            if self.state.last_error is None:
                log.exception("svm chain poll crashed", chain_id=self.state.chain_id)
            self.state.last_error = f"unexpected answer: {type(exc).__name__}: {exc}"
            return
        self.state.solver_balances = balances
        self.state.record_height(height, self.clock())

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_seconds)
            await self.update()
