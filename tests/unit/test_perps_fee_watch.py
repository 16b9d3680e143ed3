"""The watch of what the solver's exchange account keeps for the exchange's fees
(`kinds.perps.fee_watch`): below its minimum it is shown on the exchange's state and in the
metrics, at or above it not; a read the exchange does not answer ends the tick (raised, for
the loop's backoff) and changes nothing, and the next tick reads again."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from itertools import count

import pytest
from eth_account import Account

from crossfill.devnet.exchange.deployment import perps_document
from crossfill.domain.key_gas import OWN_ACCOUNT_LOW, SOLVER
from crossfill.errors import ChainUnreachable
from crossfill.kinds.perps.chain import PerpsChain
from crossfill.kinds.perps.client import ClearinghouseState, PerpsState
from crossfill.kinds.perps.config import PerpsExchangeConfig
from crossfill.kinds.perps.fee_watch import PerpsFeeWatch
from crossfill.kinds.perps.inventory import PerpsInventory
from crossfill.kinds.perps.runtime import PerpsRuntime
from crossfill.metrics import Metrics
from crossfill.types import ChainId

SOLVER_ACCOUNT = Account.create().address
CONFIG = PerpsExchangeConfig.model_validate(
    {**perps_document(api_url="http://exchange.test"),
     "solver": {"address": SOLVER_ACCOUNT, "key": "env:UNUSED"},
     "key_gas": {"minimum": "5"}}
)  # fmt: skip


class Exchange:
    """The exchange's perps balance of the solver, or an outage."""

    chain_id = ChainId(1337)

    def __init__(self) -> None:
        self.usd = Decimal(3)
        self.down = False

    async def clearinghouse_state(self, user: str) -> ClearinghouseState:
        if self.down:
            raise ChainUnreachable("exchange: ConnectError")
        return ClearinghouseState(self.usd, self.usd)


def _low(metrics: Metrics) -> float | None:
    return metrics.registry.get_sample_value(
        "crossfill_key_gas_low", {"chain_id": "1337", "key": SOLVER}
    )


async def test_below_its_fee_minimum_the_account_is_shown_and_an_outage_changes_nothing() -> None:
    exchange = Exchange()
    reads = count()
    inventory = PerpsInventory(exchange, CONFIG, lambda: float(next(reads) * 100))  # type: ignore[arg-type]
    live = PerpsRuntime(CONFIG, exchange, PerpsState(CONFIG.id), inventory)  # type: ignore[arg-type]
    metrics = Metrics()
    watch = PerpsFeeWatch(
        live, sessions=None, now=lambda: datetime.now(UTC), interval_seconds=1,  # type: ignore[arg-type]
        metrics=metrics,
    )  # fmt: skip
    chain = PerpsChain(live)
    await watch.tick()
    assert chain.low_on_gas() == {SOLVER: f"3 USDC, below its minimum 5 USDC: {OWN_ACCOUNT_LOW}"}
    assert _low(metrics) == 1

    exchange.down, exchange.usd = True, Decimal(50)
    with pytest.raises(ChainUnreachable):
        await watch.tick()  # the loop backs off and ticks again
    assert SOLVER in chain.low_on_gas() and _low(metrics) == 1  # as last read

    exchange.down = False
    await watch.tick()
    assert chain.low_on_gas() == {} and _low(metrics) == 0
