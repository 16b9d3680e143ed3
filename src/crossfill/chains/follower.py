"""Chain follower: polls a chain's head, fees, solver balances and market into its ChainState."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import structlog

from crossfill.chains.market import market_reads, market_snapshot
from crossfill.chains.port import EvmPort
from crossfill.chains.state import ChainState
from crossfill.config import ChainConfig
from crossfill.errors import ChainError
from crossfill.metrics import Metrics
from crossfill.types import NATIVE_EVM_ADDRESS

log = structlog.get_logger(__name__)


class ChainFollower:
    def __init__(
        self,
        client: EvmPort,
        state: ChainState,
        *,
        config: ChainConfig,
        solver: str,
        tokens: tuple[str, ...],
        interval_seconds: float,
        clock: Callable[[], float],
        metrics: Metrics,
    ) -> None:
        self.client = client
        self.state = state
        self.config = config
        self.solver = solver
        self.tokens = tokens
        self.interval_seconds = interval_seconds
        self.clock = clock
        self._balance_gauge = metrics.solver_balance

    async def update(self) -> None:
        """One poll, one RPC batch; a failure is recorded, never raised, so the loop goes on."""
        try:
            poll = await self.client.poll(self.solver, self.tokens, market_reads(self.config))
        except ChainError as exc:
            if self.state.last_error is None:
                log.warning("chain head poll failed", chain_id=self.state.chain_id, error=str(exc))
            self.state.record_error(str(exc))
            return
        balances = dict(zip((t.lower() for t in self.tokens), poll.token_balances, strict=True))
        balances[NATIVE_EVM_ADDRESS] = poll.native_balance
        self.state.priority_fee_per_gas = poll.priority_fee_per_gas
        self.state.solver_balances = balances
        self._export_balances(balances)
        self.state.market = market_snapshot(self.config, poll.reads)
        self.state.record_head(poll.head, self.clock())

    def _export_balances(self, balances: dict[str, int]) -> None:
        for currency in self.config.currencies:
            amount = balances.get(currency.address.lower())
            if amount is not None:
                # A float in whole units: what a dashboard shows and an alert compares.
                whole_units = amount / 10**currency.decimals
                self._balance_gauge.labels(self.config.id, currency.symbol).set(whole_units)

    async def run(self) -> None:
        """The polls after the first (see Runtime.start_followers)."""
        while True:
            await asyncio.sleep(self.interval_seconds)
            await self.update()
