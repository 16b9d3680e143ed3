"""A nonce of a worker's key taken by a transaction its journal did not sign (the key used by
hand): what every journalled worker's unit test checks on the in-memory chain, through the
one mechanism they share (`TxManager.attempt`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta

from crossfill.kinds.evm.txmanager import CONFLICT_CONFIRMATION
from crossfill.store.tables import SentTransaction
from tests.unit.fake_chain import FakeChain
from tests.unit.worker_world import Clock


async def signed_again_after_a_foreign_nonce(
    chain: FakeChain,
    clock: Clock,
    sender: str,
    tick: Callable[[], Awaitable[None]],
    journal: Callable[[], Awaitable[list[SentTransaction]]],
) -> SentTransaction:
    """The one transaction journalled so far has its nonce used by another transaction: once
    that is still so `CONFLICT_CONFIRMATION` later (a node may only be behind), its row is
    `conflicted` and the worker signs the same purpose again under the next nonce and sends
    it. The new row."""
    (first,) = await journal()
    chain.nonces[sender] = first.nonce + 1
    await tick()
    assert [row.status for row in await journal()] != ["conflicted"]
    assert len(await journal()) == 1  # once is not enough: a node may be behind
    clock.advance(CONFLICT_CONFIRMATION + timedelta(seconds=1))
    await tick()
    taken, again = sorted(await journal(), key=lambda row: row.id)
    assert taken.status == "conflicted"
    assert (again.purpose, again.request_id) == (first.purpose, first.request_id)
    assert again.nonce == first.nonce + 1 and chain.sent[-1] == again.tx_hash
    return again
