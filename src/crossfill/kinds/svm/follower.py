"""SVM chain follower: polls block height and the solver vault's balances into its state, and
the vault's SOL against the least it keeps for fees (`key_gas.minimum_lamports`) into the
metrics (`crossfill_key_gas_*`, key `solver`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

import structlog
from solders.pubkey import Pubkey

from crossfill.domain.chain_health import HeadProgress
from crossfill.domain.key_gas import SOLVER, LowKey, own_account_low
from crossfill.errors import ChainError
from crossfill.kinds.svm.client import SvmPort
from crossfill.kinds.svm.config import SvmChainConfig
from crossfill.metrics import Metrics

log = structlog.get_logger(__name__)


@dataclass
class SvmChainState(HeadProgress):
    """Written only by the chain's follower; read by the API and workers."""

    block_height: int | None = None
    # Currency address (exact base58) -> the solver vault's balance.
    solver_balances: dict[str, int] = field(default_factory=dict)

    def record_height(self, height: int, now: float) -> None:
        self.record_read(advanced=height != self.block_height, now=now)
        self.block_height = height


@dataclass(eq=False)
class SvmFollower:
    client: SvmPort
    state: SvmChainState
    _: KW_ONLY
    config: SvmChainConfig
    interval_seconds: float
    clock: Callable[[], float]
    metrics: Metrics | None = None

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
        self._publish_gas()

    def _publish_gas(self) -> None:
        if self.metrics is None:
            return
        sol = self.config.native_currency
        unit = 10**sol.decimals
        self.metrics.key_gas(
            self.config.id, SOLVER,
            balance=self.state.solver_balances.get(sol.address, 0) / unit,
            minimum=self.config.key_gas.minimum_lamports / unit,
            low=vault_low(self.config, self.state) is not None,
        )  # fmt: skip

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_seconds)
            await self.update()


def vault_low(config: SvmChainConfig, state: SvmChainState) -> LowKey | None:
    """The solver's vault below the SOL it keeps for fees, as last read (None: not below, or
    not read yet)."""
    balance = state.solver_balances.get(config.native_currency.address)
    return own_account_low(config.solver.address, balance, config.key_gas.minimum_lamports)
