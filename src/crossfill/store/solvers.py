"""The external solvers' registry (`solvers`), what their exclusive orders still hold of their
bonds, and this process's view of both (`SolverBook`, read again at most every second, with
each bond as last read from its chain)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import structlog
from sqlalchemy import and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.domain.solvers import RegisteredSolver, SolverRoute
from crossfill.domain.status import RequestStatus
from crossfill.errors import CrossfillError
from crossfill.store.db import as_utc
from crossfill.store.tables import Request, Solver
from crossfill.types import Address

log = structlog.get_logger(__name__)

# A request past its quote's expiry that was never paid holds nothing; one paid and not yet
# final holds its notional until it is filled or refunded.
_IN_FLIGHT = (RequestStatus.DEPOSITING, RequestStatus.PENDING, RequestStatus.SUBMITTED)


def routes_json(routes: Sequence[SolverRoute]) -> list[dict[str, Any]]:
    return [
        {
            "originChainId": route.origin_chain_id,
            "destinationChainId": route.destination_chain_id,
            "currencies": sorted(route.currencies),
        }
        for route in routes
    ]


def _route(stored: dict[str, Any]) -> SolverRoute:
    return SolverRoute(
        origin_chain_id=int(stored["originChainId"]),
        destination_chain_id=int(stored["destinationChainId"]),
        currencies=frozenset(str(c).lower() for c in stored["currencies"]),
    )


def registered(row: Solver) -> RegisteredSolver:
    return RegisteredSolver(
        id=row.id,
        name=row.name,
        evm_address=Address(row.evm_address),
        addresses=dict(row.addresses),
        bid_url=row.bid_url,
        routes=tuple(_route(route) for route in row.routes),
        max_size_usd_micros=row.max_size_usd_micros,
        reputation=row.reputation,
        cooldown_until=None if row.cooldown_until is None else as_utc(row.cooldown_until),
    )


async def all_solvers(session: AsyncSession) -> list[Solver]:
    return list((await session.scalars(select(Solver).order_by(Solver.id))).all())


async def by_name(session: AsyncSession, name: str) -> Solver | None:
    return (await session.scalars(select(Solver).where(Solver.name == name))).one_or_none()


async def by_evm_address(session: AsyncSession, address: str) -> Solver | None:
    query = select(Solver).where(Solver.evm_address == address.lower())
    return (await session.scalars(query)).one_or_none()


async def outstanding_usd_micros(
    session: AsyncSession, addresses: Sequence[str], *, now: datetime
) -> dict[str, int]:
    """Per solver address (lower case): the USD notional of its exclusive orders still open
    (quoted and not expired, or paid and not yet filled or refunded)."""
    if not addresses:
        return {}
    open_ = or_(
        Request.status.in_([status.value for status in _IN_FLIGHT]),
        and_(Request.status == RequestStatus.WAITING.value, Request.expires_at > now),
    )
    query = (
        select(Request.exclusive_solver, func.sum(Request.amount_in_usd_micros))
        .where(Request.exclusive_solver.in_([a.lower() for a in addresses]), open_)
        .group_by(Request.exclusive_solver)
    )
    return {str(address): int(total or 0) for address, total in (await session.execute(query))}


@dataclass
class _Read:
    value: int
    at: float


@dataclass
class SolverBook:
    """The registry as this process last read it (again when older than `registry_seconds`),
    and each (chain, solver, currency) bond as last read (again when older than
    `bond_seconds`). Quotes read it; nothing here is trusted from a request."""

    sessions: async_sessionmaker[AsyncSession]
    clock: Callable[[], float] = time.monotonic
    registry_seconds: float = 1.0
    bond_seconds: float = 5.0
    _solvers: tuple[RegisteredSolver, ...] = ()
    _read_at: float | None = None
    _bonds: dict[tuple[int, str, str], _Read] = field(default_factory=dict)
    _refreshing: dict[tuple[int, str, str], asyncio.Task[None]] = field(default_factory=dict)

    async def solvers(self) -> tuple[RegisteredSolver, ...]:
        now = self.clock()
        if self._read_at is None or now - self._read_at >= self.registry_seconds:
            async with self.sessions() as session:
                self._solvers = tuple(registered(row) for row in await all_solvers(session))
            self._read_at = now
        return self._solvers

    def none_registered(self) -> bool:
        """Whether the registry, read within `registry_seconds`, had no solver (the quote path
        then skips the auction without a task or a read)."""
        read_at = self._read_at
        return (
            read_at is not None
            and self.clock() - read_at < self.registry_seconds
            and not self._solvers
        )

    def forget_registry(self) -> None:
        """Read the registry again at the next quote (after an operator's change here)."""
        self._read_at = None

    async def bond(self, key: tuple[int, str, str], read: Callable[[], Awaitable[int]]) -> int:
        """The bond of `key` (chain id, solver, currency): read with `read` when never read;
        when older than `bond_seconds`, the last value, read again in the background (a
        quote never waits on a bond read twice)."""
        now = self.clock()
        known = self._bonds.get(key)
        if known is None:
            return self.prime(key, await read())
        if now - known.at >= self.bond_seconds and key not in self._refreshing:
            self._refreshing[key] = asyncio.create_task(self._refresh(key, read))
        return known.value

    def prime(self, key: tuple[int, str, str], value: int) -> int:
        """Keep `value` as the bond of `key`, read now."""
        self._bonds[key] = _Read(value, self.clock())
        return value

    async def _refresh(self, key: tuple[int, str, str], read: Callable[[], Awaitable[int]]) -> None:
        try:
            self.prime(key, await read())
        except CrossfillError as exc:
            log.warning("solver bond not read again", key=key, error=str(exc))
        finally:
            self._refreshing.pop(key, None)
