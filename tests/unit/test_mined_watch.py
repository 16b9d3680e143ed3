"""The mined-transaction watch on the in-memory chain: which heads cost a look at the chain,
and what is sent again after a reorg."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from eth_account import Account

from crossfill.chains.evm import BlockHead
from crossfill.errors import ChainError, ChainUnreachable, NodeBehind
from crossfill.metrics import Metrics
from crossfill.store.tables import SentTransaction
from crossfill.workers.mined_watch import MinedWatch
from crossfill.workers.txmanager import TxManager
from tests.unit.fake_chain import FakeChain
from tests.unit.worker_world import chain_world

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


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with chain_world(tmp_path) as base:
        txmanager = TxManager(
            base.chain, base.state, Account.create(), base.sessions, now=base.clock, holder="me"
        )
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


async def test_a_reverted_transaction_gone_is_reported_not_sent_again(world: World) -> None:
    row = await world.mined("refund", status=0)
    await world.settle()
    del world.chain.receipts[row.tx_hash]
    world.reorg()
    world.chain.sent.clear()
    await world.settle()
    assert world.chain.sent == []
    world.chain.push_head()
    await world.settle()  # reported once, not at every head
    assert world.counted("reverted_gone") == 1 and world.counted("sent_again") == 0


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
            base.chain, base.state, Account.create(), base.sessions, now=base.clock, holder="me"
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
