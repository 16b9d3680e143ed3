"""This process's view of external solvers' bonds: read once, then again in the background
when old, so a quote never waits on a bond read twice."""

from __future__ import annotations

import asyncio
from typing import Any

from crossfill.errors import ChainUnreachable
from crossfill.store.solvers import SolverBook

KEY = (900002, "0x" + "aa" * 20, "0x" + "00" * 20)


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


class Reads:
    def __init__(self, *answers: int | Exception) -> None:
        self.answers = list(answers)
        self.made = 0

    async def __call__(self) -> int:
        self.made += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def book(clock: Clock) -> SolverBook:
    sessions: Any = None  # the bond cache never opens a session
    return SolverBook(sessions, clock=clock, bond_seconds=5.0)


async def test_a_bond_is_read_once_then_kept() -> None:
    clock, reads = Clock(), Reads(100)
    solvers = book(clock)
    assert await solvers.bond(KEY, reads) == 100
    clock.now = 4.9
    assert await solvers.bond(KEY, reads) == 100
    assert reads.made == 1


async def test_an_old_bond_is_answered_and_read_again_in_the_background() -> None:
    clock, reads = Clock(), Reads(100, 40)
    solvers = book(clock)
    await solvers.bond(KEY, reads)
    clock.now = 5.0
    assert await solvers.bond(KEY, reads) == 100  # the last value, without waiting
    assert await solvers.bond(KEY, reads) == 100  # one read again at a time
    await asyncio.sleep(0)
    assert await solvers.bond(KEY, reads) == 40
    assert reads.made == 2


async def test_a_failed_read_again_keeps_the_last_value() -> None:
    clock, reads = Clock(), Reads(100, ChainUnreachable("down"), 70)
    solvers = book(clock)
    await solvers.bond(KEY, reads)
    clock.now = 6.0
    assert await solvers.bond(KEY, reads) == 100
    await asyncio.sleep(0)
    assert await solvers.bond(KEY, reads) == 100  # failed: tried again at the next ask
    await asyncio.sleep(0)
    assert await solvers.bond(KEY, reads) == 70


async def test_a_primed_bond_is_not_read() -> None:
    clock, reads = Clock(), Reads()
    solvers = book(clock)
    solvers.prime(KEY, 9)
    assert await solvers.bond(KEY, reads) == 9
    assert reads.made == 0


class _NoRows:
    def all(self) -> list[object]:
        return []


class _EmptyRegistry:
    """A session over a registry without a solver."""

    async def __aenter__(self) -> _EmptyRegistry:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def scalars(self, statement: object) -> _NoRows:
        return _NoRows()


async def test_an_empty_registry_read_lately_skips_the_auction_until_read_again() -> None:
    clock = Clock()
    sessions: Any = _EmptyRegistry
    solvers = SolverBook(sessions, clock=clock, registry_seconds=1.0)
    assert not solvers.none_registered()  # never read: the auction reads it
    assert await solvers.solvers() == ()
    assert solvers.none_registered()
    clock.now = 1.0
    assert not solvers.none_registered()  # read too long ago
    await solvers.solvers()
    solvers.forget_registry()  # an operator registered one here
    assert not solvers.none_registered()
