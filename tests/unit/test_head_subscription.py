"""The follower on the in-memory chain port's pushed heads: each pushed head is announced at
once and polled; a dropped subscription falls back to polling and is subscribed again; a
refused one is retried, polling meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from crossfill.domain.backoff import Backoff
from crossfill.errors import ChainUnreachable
from crossfill.kinds.evm.client import BlockHead
from crossfill.kinds.evm.follower import ChainFollower
from crossfill.kinds.evm.head_subscription import subscribed_head
from tests.unit.worker_world import ChainWorld, chain_world

# Polls come this often when no head is pushed; resubscribing waits well under it.
POLL_SECONDS = 0.2


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[ChainWorld, ChainFollower]]:
    async with chain_world(tmp_path) as base:
        follower = ChainFollower(
            base.chain,
            base.state,
            config=base.config,
            solver="0x",
            tokens=(),
            interval_seconds=POLL_SECONDS,
            clock=float,
            metrics=base.metrics,
            heads=base.chain,
            resubscribe=Backoff(base_seconds=0.01, cap_seconds=0.01),
        )
        yield base, follower


async def _until(condition: object, what: str) -> None:
    assert callable(condition)
    for _ in range(500):
        if condition():
            return
        await asyncio.sleep(0.002)
    raise AssertionError(f"never: {what}")


async def _running(follower: ChainFollower) -> asyncio.Task[None]:
    return asyncio.create_task(follower.run())


async def _stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_a_pushed_head_is_announced_and_polled_at_once(
    world: tuple[ChainWorld, ChainFollower],
) -> None:
    base, follower = world
    announced: list[BlockHead] = []
    follower.on_new_head(announced.append)
    task = await _running(follower)
    await _until(lambda: base.chain.subscriptions == 1, "subscribed")
    polls_before = base.chain.calls.count("poll")
    pushed = base.chain.push_head()
    await _until(lambda: announced and announced[-1] == pushed, "the pushed head announced")
    await _until(lambda: base.chain.calls.count("poll") > polls_before, "a poll after it")
    assert follower.subscribed
    assert base.state.head == pushed
    await _stop(task)


async def test_heads_are_announced_once_and_never_backwards(
    world: tuple[ChainWorld, ChainFollower],
) -> None:
    base, follower = world
    announced: list[BlockHead] = []
    follower.on_new_head(announced.append)
    task = await _running(follower)
    await _until(lambda: base.chain.subscriptions == 1, "subscribed")
    for _ in range(3):
        last = base.chain.push_head()
    # The first push's poll already sees the third head: the older pushes are no news then.
    await _until(lambda: announced and announced[-1] == last, "the newest head announced")
    await follower.update()  # the same head polled again
    numbers = [head.number for head in announced]
    assert numbers == sorted(set(numbers))
    assert announced[-1] == last
    await _stop(task)


async def test_a_dropped_subscription_falls_back_to_polling_and_resubscribes(
    world: tuple[ChainWorld, ChainFollower],
) -> None:
    base, follower = world
    announced: list[BlockHead] = []
    follower.on_new_head(announced.append)
    # The first reconnection is refused too: polling carries on meanwhile.
    task = await _running(follower)
    await _until(lambda: base.chain.subscriptions == 1, "subscribed")
    base.chain.push_head()
    await _until(lambda: follower.subscribed, "subscribed")
    base.chain.fail("new_heads", ChainUnreachable("connection refused"))
    base.chain.drop_subscription()
    await _until(lambda: not follower.subscribed, "the drop noticed")
    # A head made while no subscription is open reaches the workers through a poll.
    base.chain.head_block = BlockHead(
        base.chain.head_block.number + 1, 0, "0x" + "22" * 32, 1, base.chain.head_block.hash
    )
    await _until(lambda: announced[-1] == base.chain.head_block, "the polled head announced")
    await _until(lambda: base.chain.subscriptions == 2, "subscribed again")
    pushed = base.chain.push_head()
    await _until(lambda: announced[-1] == pushed, "pushed heads again")
    assert follower.subscribed
    assert base.chain.calls.count("new_heads") == 3  # first, refused, resubscribed
    await _stop(task)


async def test_without_a_head_stream_the_follower_polls(
    world: tuple[ChainWorld, ChainFollower],
) -> None:
    base, follower = world
    follower.heads = None
    announced: list[BlockHead] = []
    follower.on_new_head(announced.append)
    task = asyncio.create_task(follower.run())
    base.chain.head_block = BlockHead(101, 0, "0x" + "33" * 32, 1)
    await _until(lambda: announced and announced[-1].number == 101, "the polled head announced")
    assert "new_heads" not in base.chain.calls
    await _stop(task)


def test_a_websocket_header_becomes_a_block_head() -> None:
    header = {
        "number": 7,
        "timestamp": 1_700_000_007,
        "hash": bytes.fromhex("aa" * 32),
        "parentHash": bytes.fromhex("bb" * 32),
        "baseFeePerGas": 875_000_000,
    }
    assert subscribed_head(header) == BlockHead(
        7, 1_700_000_007, "0x" + "aa" * 32, 875_000_000, "0x" + "bb" * 32
    )


async def test_a_poll_failing_in_a_way_nobody_expected_is_recorded_and_polling_goes_on(
    world: tuple[ChainWorld, ChainFollower],
) -> None:
    """The follower's loop must outlive any answer: one that the client failed to make sense
    of (here a ValueError, as a node's garbage once raised) is the chain's failure, shown on
    /chains, and the next poll goes on."""
    base, follower = world
    base.chain.fail("poll", ValueError("not a hex number: '<html>'"))
    await follower.update()
    assert base.state.last_error is not None
    assert "ValueError" in base.state.last_error
    base.chain.fail("poll", ValueError("not a hex number: '<html>'"))
    task = await _running(follower)
    await _until(lambda: base.chain.calls.count("poll") >= 3, "polling after the failures")
    assert not task.done()
    await _stop(task)
