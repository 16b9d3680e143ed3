"""What the solver's unit tests stand on: the chain world, the chain's solver (this process,
"me") and one pending request for it to fill; more pending requests made the same way, and a
revert the contract itself answers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import insert, select

from crossfill.contracts.reverts import RevertReason
from crossfill.errors import Reverted
from crossfill.kinds.evm.solver import Solver
from crossfill.kinds.evm.state import ChainState
from crossfill.store.tables import Request, SentTransaction
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support.synthetic import synthetic_requests
from tests.unit.fake_chain import FakeChain
from tests.unit.worker_world import START, ChainWorld, Clock


def pending_request(index: int, chain_id: int, amount: int) -> dict[str, Any]:
    """The `index`th synthetic request, pending on `chain_id`, paying `amount` of its gas
    currency."""
    row = synthetic_requests(index + 1, start=START).requests[index]
    row.update(
        status="pending",
        fail_reason=None,
        refund_fail_reason=None,
        destination_chain_id=chain_id,
        destination_currency=NATIVE_EVM_ADDRESS,
        amount_out=str(amount),
        minimum_amount_out=str(amount),
        expires_at=START + timedelta(minutes=5),
        updated_at=START,
    )
    return row


async def store_pending_request(
    base: ChainWorld, amount: int, *, index: int = 0, **columns: object
) -> dict[str, Any]:
    """The `index`th synthetic request, pending on the chain for `amount` of its gas currency,
    with `columns` of its own, stored; its row."""
    row = pending_request(index, base.config.id, amount)
    row.update(columns)
    async with base.engine.begin() as connection:
        await connection.execute(insert(Request), [row])
    return row


def reverted(name: str, *args: object) -> Reverted:
    """The contract's own revert with error `name` and its arguments."""
    return Reverted("reverted", data=b"", reason=RevertReason(name, args))


@dataclass
class SolverWorld:
    """The chain world, its solver and the request the test follows."""

    base: ChainWorld
    solver: Solver
    request_id: str
    order_id: str

    @property
    def chain(self) -> FakeChain:
        return self.base.chain

    @property
    def state(self) -> ChainState:
        return self.base.state

    @property
    def clock(self) -> Clock:
        return self.base.clock

    async def request(self) -> Request:
        async with self.solver.sessions() as session:
            row = await session.get(Request, self.request_id)
        assert row is not None
        return row

    async def journal(self) -> list[SentTransaction]:
        async with self.solver.sessions() as session:
            return list(await session.scalars(select(SentTransaction)))
