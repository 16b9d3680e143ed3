"""The mined-transaction watch on the in-memory chain: which heads cost a look at the chain,
and what is sent again after a reorg."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from eth_account.typed_transactions.typed_transaction import TypedTransaction
from hexbytes import HexBytes
from sqlalchemy import select

from crossfill.errors import ChainError, ChainUnreachable, NodeBehind
from crossfill.kinds.evm.client import BlockHead
from crossfill.kinds.evm.mined_watch import MinedWatch
from crossfill.kinds.evm.txmanager import CONFLICT_CONFIRMATION, VOID, TxManager
from crossfill.metrics import Metrics
from crossfill.store.tables import SentTransaction
from tests.unit.fake_chain import FakeChain
from tests.unit.worker_world import START, chain_world

FILLER = "0x" + "fa" * 20


@dataclass
class World:
    chain: FakeChain
    txmanager: TxManager
    watch: MinedWatch
    metrics: Metrics

    def counted(self, outcome: str) -> float:
        labels = {"chain_id": str(self.watch.chain.config.id), "outcome": outcome}
        found = self.metrics.registry.get_sample_value(
            "crossfill_reorged_transactions_total", labels
        )
        return found or 0.0

    async def mined(self, purpose: str, *, status: int = 1) -> SentTransaction:
        """A transaction sent and mined in a new block on top of the head."""
        row = await self.txmanager.send(
            to=FILLER, data=b"", value=0, gas_limit=50_000, purpose=purpose, request_id=None
        )
        self.chain.push_head()
        self.chain.mine(row.tx_hash, status=status)
        assert await self.txmanager.mined_for(None, purpose) is not None
        return row

    async def settle(self) -> None:
        """The watch's look at the current head, with the chain as it is."""
        self.watch.new_head(self.chain.head_block)
        await self.watch.tick()

    def reorg(self) -> BlockHead:
        """The last two blocks replaced by other ones (their transactions' receipts are the
        test's to keep or drop)."""
        old = self.chain.head_block
        below = BlockHead(old.number - 1, old.timestamp - 1, "0x" + "dd" * 32, 1)
        self.chain.replaced_blocks[below.number] = below
        self.chain.head_block = BlockHead(
            old.number, old.timestamp, "0x" + "ee" * 32, 1, parent_hash=below.hash
        )
        self.chain.replaced_blocks[old.number] = self.chain.head_block
        return self.chain.head_block


# The signer lease, held the whole test (no keeper renews it here) as the clock moves on.
HELD = timedelta(minutes=5)


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with chain_world(tmp_path) as base:
        txmanager = TxManager(
            base.chain, base.state, base.signer(), base.sessions, now=base.clock, holder="me"
        )
        txmanager.lease = HELD
        await txmanager.hold_signer()
        watch = MinedWatch(base.runtime, txmanager, interval_seconds=1, metrics=base.metrics)
        yield World(base.chain, txmanager, watch, base.metrics)


async def test_heads_that_extend_the_checked_one_read_nothing_of_the_chain(world: World) -> None:
    await world.mined("fill")
    await world.settle()  # the first head is checked
    reads = world.chain.calls.count("block_at")
    for _ in range(3):
        world.chain.push_head()
        await world.settle()
    assert world.chain.calls.count("block_at") == reads


async def test_a_transaction_gone_in_a_reorg_is_sent_again_in_nonce_order(world: World) -> None:
    first, second = await world.mined("fill"), await world.mined("refund")
    await world.settle()
    del world.chain.receipts[first.tx_hash], world.chain.receipts[second.tx_hash]
    world.reorg()
    world.chain.sent.clear()
    await world.settle()
    assert world.chain.sent == [first.tx_hash, second.tx_hash]
    # Not seen mined again yet: the next head, though it extends this one, looks again.
    world.chain.sent.clear()
    world.chain.push_head()
    await world.settle()
    assert world.chain.sent == [first.tx_hash, second.tx_hash]
    assert world.counted("sent_again") == 4


async def test_a_transaction_mined_again_elsewhere_is_followed_not_sent(world: World) -> None:
    row = await world.mined("fill")
    await world.settle()
    head = world.reorg()
    world.chain.mine(row.tx_hash)  # in the new head block
    world.chain.sent.clear()
    await world.settle()
    assert world.chain.sent == []
    (moved,) = await world.txmanager.mined_since(0)
    assert (moved.block_number, moved.block_hash) == (head.number, head.hash)
    assert world.counted("mined_again") == 1


async def _voids(world: World) -> list[SentTransaction]:
    async with world.txmanager.sessions() as session:
        rows = await session.scalars(select(SentTransaction).where(SentTransaction.purpose == VOID))
        return list(rows)


async def _voided_refund(world: World) -> tuple[SentTransaction, SentTransaction]:
    """A reverted refund reorged out for good, and the void the watch sent for its nonce."""
    refund = await world.mined("refund", status=0)
    await world.settle()
    del world.chain.receipts[refund.tx_hash]
    world.reorg()
    await world.settle()
    (void,) = await _voids(world)
    return refund, void


async def test_a_reverted_transaction_gone_is_not_sent_again_its_nonce_is_voided(
    world: World,
) -> None:
    refund = await world.mined("refund", status=0)
    later = await world.mined("fill")
    await world.settle()
    del world.chain.receipts[refund.tx_hash], world.chain.receipts[later.tx_hash]
    world.reorg()
    world.chain.sent.clear()
    await world.settle()
    (void,) = await _voids(world)
    # The refund's nonce used by a transfer of nothing to the signer itself, priced to
    # displace the refund from any pool still holding it; the later fill sent again after it.
    assert world.chain.sent[0] == void.tx_hash and refund.tx_hash not in world.chain.sent
    assert world.chain.sent.index(later.tx_hash) > 0
    sent = TypedTransaction.from_bytes(HexBytes(void.raw_transaction)).as_dict()
    assert (sent["nonce"], sent["value"], sent["data"]) == (refund.nonce, 0, b"")
    assert HexBytes(sent["to"]).to_0x_hex() == world.txmanager.sender
    assert sent["maxPriorityFeePerGas"] * 8 >= int(refund.max_priority_fee_per_gas) * 9
    assert sent["maxFeePerGas"] * 8 >= int(refund.max_fee_per_gas) * 9
    assert (void.request_id, void.status) == (refund.request_id, "broadcast")
    assert world.counted("voided") == 1 and world.counted("sent_again") == 1

    # Unmined yet: the next head, though it extends this one, sends the same void again.
    world.chain.sent.clear()
    world.chain.push_head()
    await world.settle()
    assert void.tx_hash in world.chain.sent and len(await _voids(world)) == 1
    # Mined (with the fill after it): recorded, and later heads that extend it read nothing.
    world.chain.mine(void.tx_hash)
    world.chain.mine(later.tx_hash)
    world.chain.push_head()
    await world.settle()
    (mined,) = await _voids(world)
    assert (mined.status, mined.block_number) == ("mined", world.chain.head_block.number - 1)
    reads = world.chain.calls.count("block_at")
    world.chain.push_head()
    await world.settle()
    assert world.chain.calls.count("block_at") == reads
    assert world.counted("voided") == 1


async def test_a_void_is_signed_once_whatever_restarts(world: World) -> None:
    """The journal, not the watch's memory, says a nonce has its void: a watch started
    afresh (a restart) sends the same one again."""
    _, void = await _voided_refund(world)
    world.chain.sent.clear()
    started = MinedWatch(
        world.watch.chain, world.txmanager, interval_seconds=1, metrics=world.metrics
    )
    started.new_head(world.chain.push_head())
    await started.tick()
    assert world.chain.sent == [void.tx_hash] and len(await _voids(world)) == 1


async def test_a_reverted_transaction_mined_again_before_its_void_drops_the_void(
    world: World,
) -> None:
    refund, _ = await _voided_refund(world)
    world.chain.push_head()
    world.chain.mine(refund.tx_hash)  # some pool kept it: mined, and it succeeds this time
    world.chain.sent.clear()
    await world.settle()
    (void,) = await _voids(world)
    assert void.status == "dropped" and world.chain.sent == []
    (followed,) = await world.txmanager.mined_since(0)
    assert (followed.tx_hash, followed.status) == (refund.tx_hash, "mined")
    assert world.counted("outcome_changed") == 1


async def test_a_void_gone_in_a_reorg_is_sent_again(world: World) -> None:
    _, void = await _voided_refund(world)
    world.chain.push_head()
    world.chain.mine(void.tx_hash)
    world.chain.push_head()
    await world.settle()
    del world.chain.receipts[void.tx_hash]
    world.reorg()
    world.chain.sent.clear()
    await world.settle()
    assert world.chain.sent == [void.tx_hash] and len(await _voids(world)) == 1


async def test_a_transaction_that_does_otherwise_when_mined_again_is_recorded_so(
    world: World,
) -> None:
    row = await world.mined("fill")
    await world.settle()
    world.reorg()
    world.chain.mine(row.tx_hash, status=0)  # mined again, and reverted this time
    await world.settle()
    (moved,) = await world.txmanager.mined_since(0)
    assert moved.status == "failed"
    assert world.counted("outcome_changed") == 1 and world.counted("mined_again") == 0


async def test_only_the_signer_lease_holder_watches(tmp_path: Path) -> None:
    async with chain_world(tmp_path) as base:
        txmanager = TxManager(
            base.chain, base.state, base.signer(), base.sessions, now=base.clock, holder="me"
        )
        watch = MinedWatch(base.runtime, txmanager, interval_seconds=1, metrics=base.metrics)
        watch.new_head(base.chain.head_block)
        await watch.tick()
        assert "block_at" not in base.chain.calls


@pytest.mark.parametrize(
    ("method", "failure"),
    [
        ("block_at", ChainUnreachable("chain 1: node unreachable: 502")),
        ("block_at", NodeBehind("the node answering has not reached it", block_number=0)),
        ("receipt", ChainUnreachable("chain 1: node unreachable: connection reset")),
        ("send_raw", ChainUnreachable("chain 1: node unreachable: 503")),
    ],
)
async def test_a_chain_failure_mid_check_leaves_it_to_the_next_tick(
    world: World, method: str, failure: ChainError
) -> None:
    """The tick fails (its loop backs off) with nothing taken as settled: the same head,
    looked at again once the node answers, finds the fill gone and sends it."""
    row = await world.mined("fill")
    await world.settle()
    del world.chain.receipts[row.tx_hash]
    world.reorg()
    world.chain.sent.clear()
    world.chain.fail(method, failure)
    with pytest.raises(ChainError):
        await world.settle()
    assert world.chain.sent == []
    await world.settle()
    assert world.chain.sent == [row.tx_hash]


async def test_a_send_whose_answer_is_lost_goes_again_until_the_fill_is_seen_mined(
    world: World,
) -> None:
    row = await world.mined("fill")
    await world.settle()
    del world.chain.receipts[row.tx_hash]
    world.reorg()
    world.chain.sent.clear()
    world.chain.fail("send_raw_after_taking", ChainUnreachable("connection reset"))
    with pytest.raises(ChainError):
        await world.settle()
    assert world.chain.sent == [row.tx_hash]  # the node took it; nobody heard
    world.chain.push_head()
    await world.settle()
    assert world.chain.sent == [row.tx_hash, row.tx_hash]
    world.chain.mine(row.tx_hash)  # mined again, in the head block
    world.chain.push_head()
    await world.settle()
    assert world.chain.sent == [row.tx_hash, row.tx_hash]
    assert world.counted("mined_again") == 1


async def test_a_watch_started_after_the_reorg_finds_what_left(world: World) -> None:
    """A process restarted (or killed) after the reorg: its first look checks every
    transaction mined since `finality_blocks` ago."""
    row = await world.mined("fill")
    del world.chain.receipts[row.tx_hash]
    world.reorg()
    world.chain.sent.clear()
    started = MinedWatch(
        world.watch.chain, world.txmanager, interval_seconds=1, metrics=world.metrics
    )
    started.new_head(world.chain.head_block)
    await started.tick()
    assert world.chain.sent == [row.tx_hash]


@pytest.mark.parametrize("fault", ["send_raw", "send_raw_after_taking"])
async def test_a_void_whose_broadcast_fails_or_is_unanswered_goes_again_the_same(
    world: World, fault: str
) -> None:
    """Journalled before its broadcast: the next tick sends that very void, none other."""
    refund = await world.mined("refund", status=0)
    await world.settle()
    del world.chain.receipts[refund.tx_hash]
    world.reorg()
    world.chain.sent.clear()
    world.chain.fail(fault, ChainUnreachable("chain 1: node unreachable: 502"))
    with pytest.raises(ChainError):
        await world.settle()
    (void,) = await _voids(world)
    world.chain.push_head()
    await world.settle()
    assert world.chain.sent[-1] == void.tx_hash and len(await _voids(world)) == 1
    assert refund.tx_hash not in world.chain.sent


async def test_a_void_whose_nonce_another_transaction_took_is_sent_no_more(
    world: World,
) -> None:
    _, void = await _voided_refund(world)
    world.chain.nonces[world.txmanager.sender] = void.nonce + 1  # the key used by hand
    world.chain.push_head()
    await world.settle()  # not believed at once: a node may be behind
    world.watch.txmanager.now = lambda: START + CONFLICT_CONFIRMATION + timedelta(seconds=1)
    world.chain.sent.clear()
    world.chain.push_head()
    await world.settle()
    (taken,) = await _voids(world)
    assert taken.status == "conflicted" and world.chain.sent == []
