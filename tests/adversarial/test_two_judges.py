"""Two processes' indexers over one database (a second `crossfill run` started by mistake, or
a client's hint and the scan): a deposit is judged once. The second judge, which listed the
deposit before the first committed its verdict, finds it judged and leaves it, instead of
overwriting an acceptance with DOUBLE_SPEND (the request filled and the deposit refunded)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from sqlalchemy import insert, select

from crossfill.domain.status import RequestStatus
from crossfill.kinds.evm.indexer import Indexer
from crossfill.store import deposits
from crossfill.store.tables import Deposit, Request
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.e2e.conftest import on_database
from tests.support.database import sessions_of
from tests.support.synthetic import synthetic_requests
from tests.unit.fake_chain import FakeChain
from tests.unit.worker_world import START, ChainWorld, chain_world

DEPOSIT_BLOCK = 60  # deep enough at the fake chain's head for every tier


class HeldFeeReads(FakeChain):
    """The fake chain, whose receipts' fees are read only once `gate` opens: the judge that
    reads them has listed its deposits and not yet judged them."""

    def __init__(self, chain: FakeChain, gate: asyncio.Event) -> None:
        self.__dict__.update(chain.__dict__)
        self.gate = gate

    async def fee_paid(self, tx_hash: str) -> int | None:
        await self.gate.wait()
        return await super().fee_paid(tx_hash)


async def _seen_deposit(world: ChainWorld) -> str:
    """A waiting request and its deposit, recorded seen (as a hint records it)."""
    (row,) = synthetic_requests(1, start=START).requests
    row.update(
        status=RequestStatus.WAITING,
        origin_chain_id=world.config.id,
        origin_currency=NATIVE_EVM_ADDRESS,
        amount_in=str(10**17),
        expires_at=START.replace(year=START.year + 1),
    )
    deposit = {
        "chain_id": world.config.id, "tx_hash": "0x" + "de" * 32, "log_index": 0,
        "block_number": DEPOSIT_BLOCK, "block_hash": "0x" + f"{DEPOSIT_BLOCK:064x}",
        "order_id": row["order_id"], "depositor": row["user_address"],
        "currency": NATIVE_EVM_ADDRESS, "amount": str(10**17), "state": deposits.SEEN,
        "created_at": START,
    }  # fmt: skip
    async with world.engine.begin() as connection:
        await connection.execute(insert(Request), [row])
        await connection.execute(insert(Deposit), [deposit])
    return str(row["id"])


async def test_a_deposit_listed_by_two_judges_is_judged_once(
    tmp_path: Path, database: str | None
) -> None:
    url = on_database(database).get("database_url")
    async with chain_world(tmp_path, url) as world:
        request_id = await _seen_deposit(world)
        gate = asyncio.Event()
        # The second judge's own pool, as another process would have.
        async with sessions_of(str(world.engine.url)) as second_sessions:
            first = Indexer(
                world.runtime, world.sessions, now=world.clock, interval_seconds=0.1,
                metrics=world.metrics,
            )  # fmt: skip
            held = dataclasses.replace(world.runtime, client=HeldFeeReads(world.chain, gate))
            second = Indexer(
                held, second_sessions, now=world.clock, interval_seconds=0.1,
                metrics=world.metrics,
            )  # fmt: skip
            head = await world.chain.head()
            listed = asyncio.create_task(second._confirm(head))
            await asyncio.sleep(0.2)  # it has listed the deposit, and waits on its fee
            await first._confirm(head)
            gate.set()
            await listed
        async with world.sessions() as session:
            (deposit,) = await session.scalars(select(Deposit))
            request = await session.get(Request, request_id)
            due = await deposits.due_for_refund(session, world.config.id)
    assert request is not None and request.status == RequestStatus.PENDING
    assert (deposit.outcome, deposit.request_id) == ("ACCEPTED", request_id)
    assert due == []  # filled, and never refunded as well
