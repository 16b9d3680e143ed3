"""One writer per signing key and chain: a lease, its fencing token, a takeover once it lapses
(SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.store import signer_leases
from crossfill.store.db import session_factory

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)
LEASE = timedelta(seconds=30)
CHAIN_ID, SENDER = 900002, "0x" + "aa" * 20


def _claim(holder: str, *, restarting: bool = False) -> signer_leases.LeaseClaim:
    return signer_leases.LeaseClaim(
        CHAIN_ID, SENDER, holder=holder, lease=LEASE, restarting=restarting
    )


async def _take(
    engine: AsyncEngine, holder: str, now: datetime, *, restarting: bool = False
) -> int | None:
    async with session_factory(engine)() as session, session.begin():
        return await signer_leases.take(session, _claim(holder, restarting=restarting), now=now)


async def _renew(engine: AsyncEngine, holder: str, token: int, now: datetime) -> bool:
    async with session_factory(engine)() as session, session.begin():
        return await signer_leases.renew(session, _claim(holder), token=token, now=now)


async def test_a_second_holder_waits_until_the_lease_lapses_then_fences_the_first(
    engine: AsyncEngine,
) -> None:
    assert await _take(engine, "first", NOW) == 1
    assert await _take(engine, "second", NOW + timedelta(seconds=29)) is None
    assert await _take(engine, "first", NOW + timedelta(seconds=29)) == 1  # renewed
    assert await _take(engine, "second", NOW + timedelta(seconds=58)) is None
    assert await _take(engine, "second", NOW + timedelta(seconds=60)) == 2
    # The first holder, resumed after a freeze: its journal writes are refused.
    assert not await _renew(engine, "first", 1, NOW + timedelta(seconds=61))
    assert await _renew(engine, "second", 2, NOW + timedelta(seconds=61))
    assert await _take(engine, "first", NOW + timedelta(seconds=62)) is None


async def test_two_processes_taking_a_new_lease_at_once_get_one_holder(
    engine: AsyncEngine,
) -> None:
    tokens = await asyncio.gather(*(_take(engine, f"process-{n}", NOW) for n in range(4)))
    assert sorted(tokens, key=lambda token: token is None)[0] == 1
    assert tokens.count(1) == 1, tokens


async def test_workers_of_one_process_taking_a_new_lease_at_once_all_hold_it(
    engine: AsyncEngine,
) -> None:
    """Several workers of one process share its holder name: whoever writes the first lease,
    the others hold it too, rather than reading it as another process's."""
    tokens = await asyncio.gather(*(_take(engine, "one-process", NOW) for _ in range(4)))
    assert tokens == [1, 1, 1, 1]


async def test_a_worker_started_again_under_its_name_takes_its_lease_over_at_once(
    engine: AsyncEngine,
) -> None:
    crashed = signer_leases.holder_of("host:100:aaaa", "worker-a")
    restarted = signer_leases.holder_of("host:200:bbbb", "worker-a")
    other = signer_leases.holder_of("host:300:cccc", "worker-b")
    unnamed = signer_leases.holder_of("host:400:dddd", None)
    assert await _take(engine, crashed, NOW) == 1
    # Neither another name nor a process without one, nor the same name past its first claim.
    assert await _take(engine, other, NOW + timedelta(seconds=1), restarting=True) is None
    assert await _take(engine, unnamed, NOW + timedelta(seconds=1), restarting=True) is None
    assert await _take(engine, restarted, NOW + timedelta(seconds=1)) is None
    assert await _take(engine, restarted, NOW + timedelta(seconds=1), restarting=True) == 2
    # The crashed start, were it alive after all, is fenced off; it waits like any other.
    assert not await _renew(engine, crashed, 1, NOW + timedelta(seconds=2))
    assert await _take(engine, crashed, NOW + timedelta(seconds=2)) is None
    assert await _renew(engine, restarted, 2, NOW + timedelta(seconds=2))


async def test_a_released_lease_is_taken_at_once_under_a_new_token(engine: AsyncEngine) -> None:
    assert await _take(engine, "stopping", NOW) == 1
    async with session_factory(engine)() as session, session.begin():
        await signer_leases.release_held(session, "someone else", now=NOW)
    assert await _take(engine, "standby", NOW + timedelta(seconds=1)) is None
    async with session_factory(engine)() as session, session.begin():
        await signer_leases.release_held(session, "stopping", now=NOW + timedelta(seconds=1))
    assert await _take(engine, "standby", NOW + timedelta(seconds=1)) == 2
    assert not await _renew(engine, "stopping", 1, NOW + timedelta(seconds=2))
