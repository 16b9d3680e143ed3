"""The solver's exchange account kept in view of what it holds for the exchange's fees
(`[perps.key_gas]`): every `check_interval_seconds` its balance of the fee currency is read
(through the inventory's reads, shared with quotes) onto the exchange's state (`/readyz`,
`/chains`) and into `crossfill_key_gas_*` (key `solver`). Nothing of the service on the
exchange can top the account up: below its minimum it is shown, for the operator to fund. A
read that fails ends the tick, retried with the loop's backoff."""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.domain.key_gas import SOLVER, LowKey, own_account_low
from crossfill.kinds.perps.runtime import PerpsRuntime
from crossfill.loops import run_every
from crossfill.metrics import Metrics
from crossfill.workers.kind_worker import KindWorker


@dataclass(eq=False)
class PerpsFeeWatch(KindWorker[PerpsRuntime]):
    job = "perps-fee-watch"
    metrics: Metrics | None = None

    async def run(self) -> None:
        await run_every(self.name, self.tick, self.chain.config.key_gas.check_interval_seconds)

    async def tick(self) -> None:
        config = self.chain.config
        currency = config.fee_currency()
        balance = await self.chain.inventory.balance(currency.address)
        self.chain.state.fee_balance = balance
        if self.metrics is None or balance is None:
            return
        unit = 10**currency.decimals
        self.metrics.key_gas(
            config.id, SOLVER, balance=balance / unit, minimum=config.fee_minimum() / unit,
            low=account_low(self.chain) is not None,
        )  # fmt: skip


def account_low(exchange: PerpsRuntime) -> LowKey | None:
    """The solver's exchange account below what it keeps for fees, as last read."""
    config = exchange.config
    return own_account_low(config.solver.address, exchange.state.fee_balance, config.fee_minimum())
