"""The indexer on heads its follower announces: it ticks on the announced head (no head read
of its own), and a deposit is handed to the solver at exactly the head that gives it the
confirmations its value calls for, not one head before nor after."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.config import ConfirmationTier
from crossfill.first_on_loop import fill_path
from crossfill.kinds.evm.indexer import Claim, Indexer
from crossfill.kinds.evm.unconfirmed import UnconfirmedCount
from crossfill.store import deposits
from crossfill.store.tables import ChainCursor, Deposit, Request
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.unit.receipt_logs import native_deposit_log
from tests.unit.worker_world import START, ChainWorld, chain_world

AMOUNT = 10**16
DEPOSIT_TX = "0x" + "d1" * 32


@dataclass
class World:
    base: ChainWorld
    indexer: Indexer
    handed: list[tuple[int, str]]
    request_id: str
    order_id: str

    def deposit_in_next_block(self) -> None:
        """A NativeDeposit for the request in the block the next push makes."""
        number = self.base.chain.head_block.number + 1
        self.base.chain.logs[number] = [_native_deposit(self, number)]


def _native_deposit(world: World, block_number: int) -> dict[str, Any]:
    depository = world.base.config.contracts.depository
    return native_deposit_log(
        depository, "0x" + "0a" * 20, AMOUNT, world.order_id, mined_in=block_number,
        tx_hash=DEPOSIT_TX,
    )  # fmt: skip


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with chain_world(tmp_path) as base:
        indexer = base.indexer(confirmations=2)  # every deposit needs two on this chain
        handed: list[tuple[int, str]] = []
        indexer.on_pending = lambda chain_id, request_id: handed.append((chain_id, request_id))
        (row,) = await base.waiting_native_requests(1, AMOUNT)
        yield World(base, indexer, handed, row["id"], row["order_id"])


async def _tick_on_pushed_head(world: World) -> None:
    world.indexer.new_head(world.base.chain.push_head())
    await world.indexer.tick()


async def test_the_indexer_ticks_on_the_announced_head_without_reading_one(world: World) -> None:
    await _tick_on_pushed_head(world)
    await _tick_on_pushed_head(world)
    assert "head" not in world.base.chain.calls
    assert world.base.chain.calls.count("scan") == 2


async def test_one_new_block_past_the_cursor_needs_no_cursor_check(world: World) -> None:
    await _tick_on_pushed_head(world)
    lookups = world.base.chain.calls.count("block_at")
    await _tick_on_pushed_head(world)
    # The scanned block's parent hash proves it follows the cursor: no block read for that.
    assert world.base.chain.calls.count("block_at") == lookups


async def test_the_cursor_is_read_once_then_kept_from_the_indexers_own_commits(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[int] = []
    read = deposits.cursor

    async def counted(session: AsyncSession, chain_id: int) -> ChainCursor | None:
        reads.append(chain_id)
        return await read(session, chain_id)

    monkeypatch.setattr(deposits, "cursor", counted)
    for _ in range(3):
        await _tick_on_pushed_head(world)
    assert len(reads) == 1  # before the first scan; then the indexer knows what it wrote
    async with world.base.sessions() as session:
        stored = await read(session, world.base.config.id)
    assert stored is not None and stored.block_number == world.base.chain.head_block.number


async def test_a_scan_whose_transaction_failed_is_scanned_again(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    _one_confirmation(world)
    await _tick_on_pushed_head(world)
    world.deposit_in_next_block()
    advance = deposits.advance_cursor

    async def cursor_lost(*_args: object) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(deposits, "advance_cursor", cursor_lost)
    with pytest.raises(RuntimeError):
        await _tick_on_pushed_head(world)
    monkeypatch.setattr(deposits, "advance_cursor", advance)
    await _tick_on_pushed_head(world)  # from the cursor as committed: the deposit's block again
    request, deposit = await _stored(world)
    assert (request.status, deposit.state) == ("pending", "confirmed")


async def test_each_head_is_passed_on_once_its_scan_is_done(world: World) -> None:
    passed_on: list[tuple[int, int]] = []
    world.indexer.on_scanned = lambda head: passed_on.append(
        (head.number, world.base.chain.calls.count("scan"))
    )
    await _tick_on_pushed_head(world)
    await _tick_on_pushed_head(world)
    head = world.base.chain.head_block.number
    assert passed_on == [(head - 1, 1), (head, 2)]


async def test_a_new_head_holds_the_other_work_until_its_scan_is_done(world: World) -> None:
    held_at_scan: list[bool] = []
    world.indexer.on_scanned = lambda _head: held_at_scan.append(fill_path().held)
    world.indexer.new_head(world.base.chain.push_head())
    assert fill_path().held  # from the head's announcement
    await world.indexer.tick()
    assert held_at_scan == [False]  # released once the scan (and its fills) were done
    assert not fill_path().held


async def test_a_failed_scan_releases_the_other_work(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def cursor_lost(*_args: object) -> None:
        raise RuntimeError("the database went away")

    monkeypatch.setattr(deposits, "advance_cursor", cursor_lost)
    with pytest.raises(RuntimeError):
        await _tick_on_pushed_head(world)
    assert not fill_path().held


async def test_a_deposit_is_handed_over_at_exactly_its_second_confirmation(world: World) -> None:
    await _tick_on_pushed_head(world)
    world.deposit_in_next_block()
    await _tick_on_pushed_head(world)  # mined: one confirmation
    assert world.handed == []
    await _tick_on_pushed_head(world)  # two confirmations
    assert [request_id for _, request_id in world.handed] == [world.request_id]
    await _tick_on_pushed_head(world)
    assert len(world.handed) == 1


async def test_a_deposit_for_a_request_that_already_failed_is_left_to_the_refunder(
    world: World,
) -> None:
    """A gasless call failed the request (it paid nothing), then the user deposited anyway:
    the request stays failed, and the deposit is matched to it for its refund."""
    async with world.base.sessions() as session, session.begin():
        request = await session.get(Request, world.request_id)
        assert request is not None
        request.status, request.fail_reason = "failure", "INCORRECT_PAYMENT"
    await _tick_on_pushed_head(world)
    world.deposit_in_next_block()
    for _ in range(3):
        await _tick_on_pushed_head(world)
    async with world.base.sessions() as session:
        request = await session.get(Request, world.request_id)
        (deposit,) = await session.scalars(select(Deposit))
    assert request is not None
    assert (request.status, request.fail_reason) == ("failure", "INCORRECT_PAYMENT")
    assert (deposit.state, deposit.request_id) == ("confirmed", world.request_id)
    assert world.handed == []


def _one_confirmation(world: World) -> None:
    world.indexer.config = world.indexer.config.model_copy(
        update={"confirmations": (ConfirmationTier(blocks=1),)}
    )


@dataclass
class _Claim:
    """A claim that records what the indexer does with it."""

    on_commit: Callable[[], None]
    sealed: bool = False
    was_dropped: bool = False

    async def seal(self, session: AsyncSession, *, alone: bool) -> None:
        self.sealed = True

    async def committed(self) -> None:
        assert self.sealed  # in the transaction, before it committed
        self.on_commit()

    def dropped(self) -> None:
        self.was_dropped = True


async def _stored(world: World) -> tuple[Request, Deposit]:
    async with world.base.sessions() as session:
        request = await session.get(Request, world.request_id)
        deposit = await session.scalar(select(Deposit))
    assert request is not None and deposit is not None
    return request, deposit


async def test_a_deposit_deep_enough_when_found_is_claimed_in_the_transaction_recording_it(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    _one_confirmation(world)
    seen_in_transaction: list[tuple[str, str]] = []
    left_unconfirmed: list[int] = []
    unconfirmed = deposits.unconfirmed

    async def counted(session: AsyncSession, chain_id: int) -> list[Deposit]:
        rows = await unconfirmed(session, chain_id)
        left_unconfirmed.append(len(rows))
        return rows

    monkeypatch.setattr(deposits, "unconfirmed", counted)

    async def claim(session: AsyncSession, request: Request) -> Claim | None:
        seen_in_transaction.append((request.id, request.status))
        request.lease_owner = "this-process"
        return _Claim(lambda: world.handed.append((request.destination_chain_id, request.id)))

    world.indexer.claim_pending = claim
    await _tick_on_pushed_head(world)
    world.deposit_in_next_block()
    await _tick_on_pushed_head(world)  # found with the one confirmation it needs
    assert seen_in_transaction == [(world.request_id, "pending")]
    # Never left seen-but-unconfirmed: the second tick had none to look for (recorded so, it
    # would have run the pass, and found it).
    assert left_unconfirmed == [0]
    assert [request_id for _, request_id in world.handed] == [world.request_id]
    request, deposit = await _stored(world)
    assert (request.status, request.lease_owner) == ("pending", "this-process")
    assert (deposit.state, deposit.request_id) == ("confirmed", world.request_id)


async def test_without_a_claim_the_request_is_handed_over_by_id(world: World) -> None:
    _one_confirmation(world)
    await _tick_on_pushed_head(world)
    world.deposit_in_next_block()
    await _tick_on_pushed_head(world)
    assert [request_id for _, request_id in world.handed] == [world.request_id]
    request, _ = await _stored(world)
    assert (request.status, request.lease_owner) == ("pending", None)


async def test_a_claim_whose_transaction_did_not_commit_is_not_handed_over(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    _one_confirmation(world)
    handed_claims: list[str] = []

    claims: list[_Claim] = []

    async def claim(session: AsyncSession, request: Request) -> Claim | None:
        claims.append(_Claim(lambda: handed_claims.append(request.id)))
        return claims[-1]

    async def cursor_lost(*_args: object) -> None:
        raise RuntimeError("the database went away")

    world.indexer.claim_pending = claim
    await _tick_on_pushed_head(world)
    world.deposit_in_next_block()
    monkeypatch.setattr(deposits, "advance_cursor", cursor_lost)
    with pytest.raises(RuntimeError):
        await _tick_on_pushed_head(world)
    assert handed_claims == []
    assert [(claim.sealed, claim.was_dropped) for claim in claims] == [(False, True)]
    async with world.base.sessions() as session:
        request = await session.get(Request, world.request_id)
        assert await session.scalar(select(Deposit)) is None
    assert request is not None and (request.status, request.lease_owner) == ("waiting", None)


async def test_a_deposit_another_process_left_unconfirmed_is_confirmed_at_the_full_pass(
    world: World,
) -> None:
    _one_confirmation(world)
    seconds = [0.0]
    world.indexer._unconfirmed = UnconfirmedCount(full_pass_seconds=10, clock=lambda: seconds[0])
    await _tick_on_pushed_head(world)  # the pass finds none unconfirmed
    head = world.base.chain.head_block
    async with world.base.engine.begin() as connection:  # recorded by another process
        await connection.execute(
            insert(Deposit),
            [
                {
                    "chain_id": world.base.config.id,
                    "tx_hash": "0x" + "de" * 32,
                    "log_index": 0,
                    "block_number": head.number,
                    "block_hash": head.hash,
                    "order_id": world.order_id,
                    "depositor": "0x" + "0a" * 20,
                    "currency": NATIVE_EVM_ADDRESS,
                    "amount": str(AMOUNT),
                    "state": deposits.SEEN,
                    "created_at": START,
                }
            ],
        )
    await _tick_on_pushed_head(world)
    _, deposit = await _stored(world)
    assert deposit.state == deposits.SEEN  # not this indexer's: not looked for at every head
    seconds[0] = 10.0
    await _tick_on_pushed_head(world)
    request, deposit = await _stored(world)
    assert (deposit.state, deposit.request_id) == (deposits.CONFIRMED, world.request_id)
    assert request.status == "pending"
