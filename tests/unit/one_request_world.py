"""What the unit test of a worker sending one journalled transaction per request stands on (the
permit depositor, the sponsor collector): the chain world, the worker sending as a fresh solver
account, one stored request with its row in the worker's table, and a read of that row beside
the journal."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Literal, TypeVar

from eth_account.signers.local import LocalAccount
from sqlalchemy import insert, select

from crossfill.kinds.evm.journalled_worker import JournalledWorker
from crossfill.kinds.evm.txmanager import TxManager
from crossfill.store.tables import Base, Request, SentTransaction
from tests.support.synthetic import synthetic_requests
from tests.unit.fake_chain import FakeChain
from tests.unit.worker_world import START, ChainWorld, chain_world

TOKEN = "0x" + "c0" * 20

Row = TypeVar("Row", bound=Base)
Worker = TypeVar("Worker", bound=JournalledWorker)


@dataclass
class OneRequestWorld(Generic[Row, Worker]):
    base: ChainWorld
    worker: Worker
    solver: LocalAccount
    table: type[Row]
    request_id: str

    @property
    def chain(self) -> FakeChain:
        return self.base.chain

    async def rows(self) -> tuple[Row, list[SentTransaction]]:
        """The request's row in the worker's table, and every transaction journalled."""
        async with self.base.sessions() as session:
            row = await session.get(self.table, self.request_id)
            journal = list(await session.scalars(select(SentTransaction)))
        assert row is not None
        return row, journal

    async def journal(self) -> list[SentTransaction]:
        return (await self.rows())[1]


@asynccontextmanager
async def one_request_world(
    tmp_path: Path,
    worker: type[Worker],
    table: type[Row],
    *,
    status: str,
    side: Literal["origin", "destination"],
    columns: Mapping[str, object],
) -> AsyncIterator[OneRequestWorld[Row, Worker]]:
    """A synthetic request in `status`, with this chain as its `side`, and its row in `table`:
    `columns` and the request's id and chain, not sent yet."""
    async with chain_world(tmp_path) as base:
        solver = base.signer()
        txmanager = TxManager(
            base.chain, base.state, solver, base.sessions, now=base.clock, holder="me"
        )
        sender = worker(
            base.runtime, base.sessions, txmanager, now=base.clock, interval_seconds=0.1
        )
        (request,) = synthetic_requests(1, start=START).requests
        request.update({"status": status, f"{side}_chain_id": base.config.id})
        row = {
            "request_id": request["id"],
            "chain_id": base.config.id,
            **columns,
            "tx_hash": None,
            "updated_at": START,
        }
        async with base.engine.begin() as connection:
            await connection.execute(insert(Request), [request])
            await connection.execute(insert(table), [row])
        yield OneRequestWorld(base, sender, solver, table, request["id"])
