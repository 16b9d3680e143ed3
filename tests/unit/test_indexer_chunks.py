"""Many deposits at once. A block of them is recorded a few to a transaction: the first are
handed over to the solver while the rest are still being recorded, each deposit is recorded
and judged once, and a crash between two of those transactions loses nothing and repeats
nothing. A backlog of them (the indexer far behind the head) is caught up beside the head: a
new deposit is handed over at once, before the backlog's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.kinds.evm.indexer import (
    BACKLOG_AFTER_BLOCKS,
    BACKLOG_SLICE_BLOCKS,
    RECORDED_TOGETHER,
    Claim,
    Indexer,
)
from crossfill.store import deposits
from crossfill.store.tables import ChainCursor, Deposit, Request
from tests.unit.receipt_logs import native_deposit_log
from tests.unit.worker_world import ChainWorld, chain_world

AMOUNT = 10**16
DEPOSITS = 3 * RECORDED_TOGETHER + 1

DEPOSITOR = "0x" + "0a" * 20


@dataclass
class Block:
    base: ChainWorld
    indexer: Indexer
    order_ids: dict[str, str]  # request id -> order id
    handed: list[str]

    def deposits_in_next_block(self) -> None:
        number = self.base.chain.head_block.number + 1
        self.base.chain.logs[number] = [
            _native_deposit(self, number, index, order_id)
            for index, order_id in enumerate(self.order_ids.values())
        ]

    async def tick_on_pushed_head(self) -> None:
        self.indexer.new_head(self.base.chain.push_head())
        await self.indexer.tick()

    async def statuses(self) -> list[str]:
        async with self.base.sessions() as session:
            return list(await session.scalars(select(Request.status)))


def _native_deposit(block: Block, number: int, index: int, order_id: str) -> dict[str, Any]:
    depository = block.base.config.contracts.depository
    return native_deposit_log(
        depository, DEPOSITOR, AMOUNT, order_id, mined_in=number, tx_hash="0x" + f"{index + 1:064x}"
    )


@pytest.fixture
async def block(tmp_path: Path) -> AsyncIterator[Block]:
    async with chain_world(tmp_path) as base:
        indexer = base.indexer(confirmations=1)
        rows = await base.waiting_native_requests(DEPOSITS, AMOUNT)
        handed: list[str] = []
        indexer.on_pending = lambda _chain_id, request_id: handed.append(request_id)
        yield Block(base, indexer, {row["id"]: row["order_id"] for row in rows}, handed)


@pytest.mark.parametrize("at_once", [1, 3])
async def test_the_first_deposits_of_a_block_are_handed_over_before_the_last_are_recorded(
    block: Block, at_once: int
) -> None:
    block.indexer.concurrent_transactions = at_once
    handed_when_claimed: list[int] = []

    async def claim(_session: AsyncSession, _request: Request) -> Claim | None:
        handed_when_claimed.append(len(block.handed))
        return None  # handed over by id once its transaction commits

    block.indexer.claim_pending = claim
    await block.tick_on_pushed_head()
    block.deposits_in_next_block()
    await block.tick_on_pushed_head()
    assert sorted(block.handed) == sorted(block.order_ids)  # each once
    assert handed_when_claimed[0] == 0
    assert handed_when_claimed[-1] == DEPOSITS - 1  # the rest were handed over already
    assert await block.statuses() == ["pending"] * DEPOSITS


async def test_a_transactions_deposits_are_read_together_not_one_by_one(block: Block) -> None:
    """Which are stored, their requests, those requests' transactions and other deposits:
    a few queries a transaction, whatever the number of its deposits."""
    await block.tick_on_pushed_head()
    block.deposits_in_next_block()
    reads: list[str] = []

    def count(*args: Any) -> None:
        if args[2].lstrip().upper().startswith("SELECT"):
            reads.append(args[2])

    engine = block.base.sessions.kw["bind"].sync_engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        await block.tick_on_pushed_head()
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert await block.statuses() == ["pending"] * DEPOSITS
    transactions = -(-DEPOSITS // RECORDED_TOGETHER)
    assert len(reads) <= 4 * transactions + 4  # one deposit's own took six


@pytest.mark.parametrize("position", [1, DEPOSITS], ids=["same transaction", "a later one"])
async def test_two_deposits_of_one_order_in_a_block_are_judged_one_after_the_other(
    block: Block, position: int
) -> None:
    await block.tick_on_pushed_head()
    block.deposits_in_next_block()
    number = block.base.chain.head_block.number + 1
    first_order = next(iter(block.order_ids.values()))
    again = _native_deposit(block, number, DEPOSITS, first_order)
    block.base.chain.logs[number].insert(position, again)
    await block.tick_on_pushed_head()
    assert sorted(block.handed) == sorted(block.order_ids)  # each once
    async with block.base.sessions() as session:
        outcomes = list(
            await session.scalars(
                select(Deposit.outcome).where(Deposit.order_id == first_order).order_by(Deposit.id)
            )
        )
    assert outcomes == ["ACCEPTED", "DOUBLE_SPEND"]


async def test_a_crash_between_two_transactions_of_a_block_loses_and_repeats_nothing(
    block: Block, monkeypatch: pytest.MonkeyPatch
) -> None:
    advance = deposits.advance_cursor
    calls = 0
    real_record = deposits.record_seen

    async def dies_midway(session: AsyncSession, *args: Any, **kwargs: Any) -> Deposit | None:
        nonlocal calls
        calls += 1
        if calls == RECORDED_TOGETHER + 1:
            raise OSError("killed")  # the second transaction never commits
        return await real_record(session, *args, **kwargs)

    await block.tick_on_pushed_head()
    block.deposits_in_next_block()
    monkeypatch.setattr(deposits, "record_seen", dies_midway)
    with pytest.raises(OSError):
        await block.tick_on_pushed_head()
    # The others' transactions committed (each its deposits'), the cursor did not move.
    assert RECORDED_TOGETHER <= len(block.handed) < DEPOSITS
    monkeypatch.setattr(deposits, "record_seen", real_record)
    monkeypatch.setattr(deposits, "advance_cursor", advance)
    restarted = Indexer(
        block.indexer.chain,
        block.base.sessions,
        now=block.base.clock,
        interval_seconds=0.1,
        metrics=block.base.metrics,
    )
    restarted.on_pending = lambda _chain_id, request_id: block.handed.append(request_id)
    restarted.new_head(block.base.chain.head_block)
    await restarted.tick()  # the cursor did not move: the block is scanned again
    assert sorted(block.handed) == sorted(block.order_ids)  # each once
    async with block.base.sessions() as session:
        recorded = await session.scalar(select(func.count()).select_from(Deposit))
    assert recorded == DEPOSITS
    assert await block.statuses() == ["pending"] * DEPOSITS


async def test_a_new_deposit_is_handed_over_while_a_backlog_is_still_being_caught_up(
    block: Block,
) -> None:
    """The service was away: the old deposits, one every few blocks over several slices of
    history, wait behind the cursor; one more is made in the newest block."""
    await block.tick_on_pushed_head()  # the cursor, stored
    *old, new = block.order_ids.items()
    spacing = 3 * BACKLOG_SLICE_BLOCKS // len(old)
    start = block.base.chain.head_block.number + 1
    for index, (_request_id, order_id) in enumerate(old):
        number = start + index * spacing
        block.base.chain.logs[number] = [_native_deposit(block, number, index, order_id)]
    while block.base.chain.head_block.number < start + 3 * BACKLOG_SLICE_BLOCKS:
        block.base.chain.push_head()
    number = block.base.chain.head_block.number + 1
    block.base.chain.logs[number] = [_native_deposit(block, number, len(old), new[1])]
    assert number - start > BACKLOG_AFTER_BLOCKS

    await block.tick_on_pushed_head()
    assert block.handed[0] == new[0]  # the newest first, the backlog after it
    assert len(block.handed) < DEPOSITS  # some of the backlog still waits
    ticks = 1
    while len(block.handed) < DEPOSITS and ticks < 50:
        await block.indexer.tick()  # as the loop does at once while a backlog is left
        ticks += 1
    assert sorted(block.handed) == sorted(block.order_ids)  # each once
    async with block.base.sessions() as session:
        cursor = await session.get(ChainCursor, (block.base.config.id, deposits.INDEXER))
    assert cursor is not None and cursor.block_number == number  # the live scan's, once caught up
