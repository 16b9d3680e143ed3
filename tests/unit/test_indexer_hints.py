"""Client hints on the in-memory chain port: a hinted transaction without a receipt yet is
kept and looked for again at new heads, less and less often, for a while; what one client's
hints cost in RPC calls is bounded; a failing RPC never drops a hint and never stops the
scan."""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from crossfill.errors import ChainUnreachable
from crossfill.kinds.evm.client import BlockHead
from crossfill.kinds.evm.hint_watch import RECHECK_FIRST, RECHECK_MAX, UNMINED_HINT_PATIENCE, Hint
from crossfill.kinds.evm.indexer import Indexer
from tests.unit.worker_world import ChainWorld, chain_world

HINTED = "0x" + "ab" * 32
CLIENT = "ip:203.0.113.7"
BUDGET = 12


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[ChainWorld, Indexer]]:
    async with chain_world(tmp_path) as base:
        indexer = Indexer(
            base.runtime,
            base.sessions,
            now=base.clock,
            interval_seconds=0.1,
            metrics=base.metrics,
            hint_calls_per_client_per_minute=BUDGET,
        )
        yield base, indexer


def _next_head(world: ChainWorld, after: timedelta = RECHECK_MAX) -> None:
    """A new head, `after` the last (by default long enough for any kept hint to be due)."""
    world.clock.advance(after)
    head = world.chain.head_block
    world.chain.head_block = BlockHead(head.number + 1, head.timestamp + 1, f"0x{head.number:064x}")


def _receipt_lookups(world: ChainWorld) -> int:
    return world.chain.calls.count("receipt")


def _hint_calls(world: ChainWorld) -> int:
    hint_calls = ("receipt", "transaction_sender", "mined_nonce")
    return sum(world.chain.calls.count(call) for call in hint_calls)


async def test_an_unmined_hint_is_looked_for_again_at_a_new_head(
    world: tuple[ChainWorld, Indexer],
) -> None:
    base, indexer = world
    assert indexer.hint(Hint(HINTED, CLIENT))
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


async def test_an_unknown_hash_is_looked_for_less_and_less_often(
    world: tuple[ChainWorld, Indexer],
) -> None:
    """A head every second for three minutes: looks at 0, 2, 4 (then 8, 16, 32, 60 s apart),
    not 180."""
    base, indexer = world
    indexer.hint(Hint(HINTED, CLIENT))
    await indexer.tick()
    looks_at = [0]
    for second in range(1, 181):
        before = _receipt_lookups(base)
        _next_head(base, timedelta(seconds=1))
        await indexer.tick()
        if _receipt_lookups(base) > before:
            looks_at.append(second)
    first = int(RECHECK_FIRST.total_seconds())
    assert looks_at[:4] == [0, first, 3 * first, 7 * first]
    gaps = [later - earlier for earlier, later in itertools.pairwise(looks_at)]
    assert gaps == sorted(gaps)
    assert max(gaps) <= RECHECK_MAX.total_seconds()
    assert len(looks_at) <= 9


async def test_one_clients_hints_cost_at_most_its_budget_of_calls(
    world: tuple[ChainWorld, Indexer],
) -> None:
    """Fifty made-up hashes from one client: the first few are looked up, the rest refused;
    another client's hint is still taken; the budget refills with time."""
    base, indexer = world
    taken = [indexer.hint(Hint(f"0x{n:064x}", CLIENT)) for n in range(50)]
    assert taken.count(True) <= BUDGET
    assert indexer.hint(Hint(HINTED, "ip:198.51.100.1"))
    for _ in range(5):
        await indexer.tick()
        _next_head(base, timedelta(seconds=1))
    spent = _hint_calls(base)
    assert spent <= BUDGET + 5 + 3  # the budget, its refill over 5 s, the other client's
    assert HINTED in indexer.hints.unmined()
    _next_head(base, timedelta(minutes=1))
    assert indexer.hint(Hint(f"0x{99:064x}", CLIENT))


async def test_a_hint_whose_lookup_fails_is_kept_and_the_scan_goes_on(
    world: tuple[ChainWorld, Indexer],
) -> None:
    base, indexer = world
    base.chain.fail("receipt", ChainUnreachable("timeout"))
    indexer.hint(Hint(HINTED, CLIENT))
    await indexer.tick()
    assert "scan" in base.chain.calls
    _next_head(base)
    await indexer.tick()
    assert _receipt_lookups(base) == 2


async def test_an_unmined_hint_is_given_up_after_a_while(
    world: tuple[ChainWorld, Indexer],
) -> None:
    base, indexer = world
    indexer.hint(Hint(HINTED, CLIENT))
    await indexer.tick()
    _next_head(base, UNMINED_HINT_PATIENCE + timedelta(seconds=1))
    await indexer.tick()
    assert _receipt_lookups(base) == 1


SENDER = "0x" + "5e" * 20


async def test_a_pending_hint_is_kept_past_the_patience_while_the_node_has_it(
    world: tuple[ChainWorld, Indexer],
) -> None:
    base, indexer = world
    base.chain.transactions[HINTED] = (SENDER, 3)  # in the node's pool
    indexer.hint(Hint(HINTED, CLIENT))
    await indexer.tick()
    _next_head(base, UNMINED_HINT_PATIENCE + timedelta(seconds=1))
    await indexer.tick()
    assert _receipt_lookups(base) == 2
    assert indexer.hints.unmined() == {HINTED}


async def test_a_hint_whose_nonce_went_to_another_transaction_is_dropped(
    world: tuple[ChainWorld, Indexer],
) -> None:
    base, indexer = world
    base.chain.transactions[HINTED] = (SENDER, 3)
    indexer.hint(Hint(HINTED, CLIENT))
    await indexer.tick()
    assert indexer.hints.unmined() == {HINTED}
    base.chain.nonces[SENDER] = 4  # nonce 3 mined, in another transaction (a replacement)
    _next_head(base)
    await indexer.tick()
    assert indexer.hints.unmined() == set()
    _next_head(base)
    await indexer.tick()
    assert _receipt_lookups(base) == 3  # two lookups, and the re-check that proved it dropped


async def test_a_client_out_of_budget_cannot_hold_back_anothers_hint_of_the_same_transaction(
    world: tuple[ChainWorld, Indexer],
) -> None:
    base, indexer = world
    assert indexer.hint(Hint(HINTED, CLIENT))
    await indexer.tick()  # not mined: kept, for this client's budget to look again
    while indexer.hint(Hint("0x" + os.urandom(32).hex(), CLIENT)):
        pass
    await indexer.tick()  # the rest of its budget spent on those
    _next_head(base, RECHECK_FIRST)  # HINTED due again; less than a call refilled
    looked = _receipt_lookups(base)
    await indexer.tick()
    assert _receipt_lookups(base) == looked  # its client cannot pay for the look
    base.chain.mine(HINTED)
    looked = _receipt_lookups(base)
    assert indexer.hint(Hint(HINTED, "key:7"))  # another client: looked up at once
    await indexer.tick()
    assert _receipt_lookups(base) == looked + 1
    assert HINTED not in indexer.hints.unmined()
