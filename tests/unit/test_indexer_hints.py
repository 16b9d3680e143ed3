"""Client hints on the in-memory chain port: a hinted transaction without a receipt yet is
kept and looked for again at each new head, for a while; a failing RPC never drops it and
never stops the scan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from crossfill.chains.evm import BlockHead
from crossfill.errors import ChainUnreachable
from crossfill.workers.hint_watch import UNMINED_HINT_PATIENCE
from crossfill.workers.indexer import Indexer
from tests.unit.worker_world import ChainWorld, chain_world

HINTED = "0x" + "ab" * 32


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[ChainWorld, Indexer]]:
    async with chain_world(tmp_path) as base:
        indexer = Indexer(
            base.runtime,
            base.sessions,
            now=base.clock,
            interval_seconds=0.1,
            metrics=base.metrics,
        )
        yield base, indexer


def _next_head(world: ChainWorld) -> None:
    head = world.chain.head_block
    world.chain.head_block = BlockHead(head.number + 1, head.timestamp + 1, f"0x{head.number:064x}")


def _receipt_lookups(world: ChainWorld) -> int:
    return world.chain.calls.count("receipt")


async def test_an_unmined_hint_is_looked_for_again_at_each_new_head(
    world: tuple[ChainWorld, Indexer],
) -> None:
    base, indexer = world
    indexer.hint(HINTED)
    await indexer.tick()
    assert _receipt_lookups(base) == 1
    await indexer.tick()  # same head: nothing new can be mined
    assert _receipt_lookups(base) == 1
    _next_head(base)
    base.chain.mine(HINTED)
    await indexer.tick()
    assert _receipt_lookups(base) == 2
    _next_head(base)
    await indexer.tick()  # found: not looked for again
    assert _receipt_lookups(base) == 2


async def test_a_hint_whose_lookup_fails_is_kept_and_the_scan_goes_on(
    world: tuple[ChainWorld, Indexer],
) -> None:
    base, indexer = world
    base.chain.fail("receipt", ChainUnreachable("timeout"))
    indexer.hint(HINTED)
    await indexer.tick()
    assert "scan" in base.chain.calls
    _next_head(base)
    await indexer.tick()
    assert _receipt_lookups(base) == 2


async def test_an_unmined_hint_is_given_up_after_a_while(
    world: tuple[ChainWorld, Indexer],
) -> None:
    base, indexer = world
    indexer.hint(HINTED)
    await indexer.tick()
    base.clock.advance(UNMINED_HINT_PATIENCE + timedelta(seconds=1))
    _next_head(base)
    await indexer.tick()
    assert _receipt_lookups(base) == 1


SENDER = "0x" + "5e" * 20


async def test_a_pending_hint_is_kept_past_the_patience_while_the_node_has_it(
    world: tuple[ChainWorld, Indexer],
) -> None:
    base, indexer = world
    base.chain.transactions[HINTED] = (SENDER, 3)  # in the node's pool
    indexer.hint(HINTED)
    await indexer.tick()
    base.clock.advance(UNMINED_HINT_PATIENCE + timedelta(seconds=1))
    _next_head(base)
    await indexer.tick()
    assert _receipt_lookups(base) == 2
    assert indexer.hints.unmined() == {HINTED}


async def test_a_hint_whose_nonce_went_to_another_transaction_is_dropped(
    world: tuple[ChainWorld, Indexer],
) -> None:
    base, indexer = world
    base.chain.transactions[HINTED] = (SENDER, 3)
    indexer.hint(HINTED)
    await indexer.tick()
    assert indexer.hints.unmined() == {HINTED}
    base.chain.nonces[SENDER] = 4  # nonce 3 mined, in another transaction (a replacement)
    _next_head(base)
    await indexer.tick()
    assert indexer.hints.unmined() == set()
    _next_head(base)
    await indexer.tick()
    assert _receipt_lookups(base) == 3  # two lookups, and the re-check that proved it dropped
