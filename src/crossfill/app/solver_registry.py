"""Register, change, list and remove external solvers (`/admin/solvers`, `crossfill solvers`;
docs/solvers.md). A solver's routes name EVM chains the service serves and currencies listed
there; its bond is read from each destination's `SolverBond`, never taken from the request."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import TypeVar

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.backoff import Backoff
from crossfill.domain.identifiers import is_address, is_svm_address
from crossfill.domain.money import format_units, format_usd
from crossfill.domain.solvers import RegisteredSolver, SolverRoute
from crossfill.errors import BadRequest, ChainError, Conflict, NotFound, ServiceUnavailable
from crossfill.kinds.evm.chain import evm_chains
from crossfill.kinds.evm.config import ChainConfig
from crossfill.kinds.evm.solver_bonds import bond_of
from crossfill.quoting.prices import value_on_chain
from crossfill.runtime import Runtime
from crossfill.store import solver_fades
from crossfill.store import solvers as store
from crossfill.store.db import as_utc
from crossfill.store.tables import Solver, SolverFade
from crossfill.types import ChainId

T = TypeVar("T")
# Reads of a bond asked again while the chain fails, then a 503.
BOND_READ_ATTEMPTS = 4
DEFAULT_REPUTATION = 100
# The latest fades a solver's answer shows.
FADES_SHOWN = 10


@dataclass(frozen=True)
class SolverChanges:
    """What an operator sets of a solver; None: left as it is (all set for a new one)."""

    addresses: dict[str, str] | None = None
    bid_url: str | None = None
    routes: tuple[SolverRoute, ...] | None = None
    max_size_usd: Decimal | None = None
    reputation: int | None = None
    cooldown_until: datetime | None = None
    clear_cooldown: bool = False


@dataclass(frozen=True)
class BondHeld:
    chain_id: int
    currency: str
    symbol: str
    amount: int
    decimals: int
    usd_micros: int

    def wire(self) -> dict[str, object]:
        return {
            "chainId": self.chain_id,
            "currency": self.currency,
            "symbol": self.symbol,
            "amount": str(self.amount),
            "amountFormatted": format_units(self.amount, self.decimals),
            "amountUsd": format_usd(self.usd_micros),
        }


def _fade_wire(fade: SolverFade) -> dict[str, object]:
    return {
        "requestId": fade.request_id,
        "chainId": fade.chain_id,
        "currency": fade.currency,
        "cost": fade.cost,
        "debited": fade.debited,
        "state": fade.state,
        "txHash": fade.tx_hash,
        "consecutive": fade.consecutive,
        "cooldownUntil": as_utc(fade.cooldown_until).isoformat(),
        "createdAt": as_utc(fade.created_at).isoformat(),
    }


@dataclass(frozen=True)
class SolverView:
    solver: RegisteredSolver
    bonds: tuple[BondHeld, ...]
    outstanding_usd_micros: int
    created_at: datetime
    updated_at: datetime
    # Its fades in a row now, and its latest fades (newest first).
    consecutive_fades: int = 0
    fades: tuple[SolverFade, ...] = ()

    def wire(self) -> dict[str, object]:
        solver = self.solver
        return {
            "id": solver.id,
            "name": solver.name,
            "addresses": solver.addresses,
            "bidUrl": solver.bid_url,
            "routes": store.routes_json(solver.routes),
            "maxSizeUsd": format_usd(solver.max_size_usd_micros),
            "reputation": solver.reputation,
            "cooldownUntil": None
            if solver.cooldown_until is None
            else solver.cooldown_until.isoformat(),
            "bonds": [bond.wire() for bond in self.bonds],
            "outstandingUsd": format_usd(self.outstanding_usd_micros),
            "consecutiveFades": self.consecutive_fades,
            "fades": [_fade_wire(fade) for fade in self.fades],
            "createdAt": self.created_at.isoformat(),
            "updatedAt": self.updated_at.isoformat(),
        }


def _chain(runtime: Runtime, chain_id: int, what: str) -> ChainConfig:
    chain = evm_chains(runtime).get(ChainId(chain_id))
    if chain is None:
        raise BadRequest(
            f"{what} {chain_id} is not an EVM chain this service serves",
            error_code="INVALID_ROUTES",
        )
    return chain.config


def _listed(config: ChainConfig) -> dict[str, str]:
    """Lower-case address -> symbol of each currency the chain lists."""
    currencies = (config.native_currency, *config.erc20_currencies)
    return {c.address.lower(): c.symbol for c in currencies}


def check_routes(runtime: Runtime, routes: tuple[SolverRoute, ...]) -> None:
    """BadRequest unless each route joins two EVM chains served, its destination has a
    `SolverBond`, and each of its currencies is listed on one of its chains."""
    if not routes:
        raise BadRequest("routes must name at least one route", error_code="INVALID_ROUTES")
    for route in routes:
        origin = _chain(runtime, route.origin_chain_id, "originChainId")
        destination = _chain(runtime, route.destination_chain_id, "destinationChainId")
        if destination.contracts.solver_bond is None:
            raise BadRequest(
                f"chain {destination.id} has no SolverBond: no external solver fills there",
                error_code="INVALID_ROUTES",
            )
        listed = _listed(origin) | _listed(destination)
        unknown = sorted(route.currencies - listed.keys())
        if not route.currencies or unknown:
            raise BadRequest(
                f"route {origin.id}->{destination.id}: currencies must be listed on its chains"
                f" (not listed: {', '.join(unknown) or 'none given'})",
                error_code="INVALID_ROUTES",
            )


def _usd_micros(value: Decimal) -> int:
    micros = value * 1_000_000
    if value <= 0 or micros != micros.to_integral_value() or micros >= 2**63:
        raise BadRequest(
            "maxSizeUsd must be a positive amount of at most six decimals",
            error_code="INVALID_MAX_SIZE",
        )
    return int(micros)


async def _retried(read: Callable[[], Awaitable[T]]) -> T:
    """`read`'s answer, asked again with backoff while the chain fails; its last failure
    raised."""
    backoff = Backoff(base_seconds=0.2, cap_seconds=2.0)
    for _ in range(BOND_READ_ATTEMPTS - 1):
        try:
            return await read()
        except ChainError:
            await asyncio.sleep(backoff.failed())
    return await read()


async def bonds_of(runtime: Runtime, solver: RegisteredSolver) -> tuple[BondHeld, ...]:
    """The solver's bond in each currency of its routes on each route's destination, read
    from the chain (503 when the chain does not answer, after retries)."""
    wanted = {
        (route.destination_chain_id, currency)
        for route in solver.routes
        for currency in route.currencies
    }
    held = await asyncio.gather(
        *(_bond_held(runtime, chain_id, currency, solver) for chain_id, currency in sorted(wanted))
    )
    return tuple(bond for bond in held if bond is not None)


async def _bond_held(
    runtime: Runtime, chain_id: int, currency: str, solver: RegisteredSolver
) -> BondHeld | None:
    chain = evm_chains(runtime).get(ChainId(chain_id))
    if chain is None:
        return None  # no longer served
    config = chain.config
    bond, listed = config.contracts.solver_bond, config.currency(currency)
    if bond is None or listed is None:
        return None
    client = chain.client
    try:
        amount = await _retried(lambda: bond_of(client, bond, solver.evm_address, currency))
    except ChainError:
        raise ServiceUnavailable(
            f"chain {chain_id} did not answer the bond read; try again"
        ) from None
    # Quotes use what was read here until they read it again.
    runtime.solver_book.prime((chain_id, solver.evm_address.lower(), currency), amount)
    usd = value_on_chain(config, chain.state, currency, amount, int(time.time()))
    return BondHeld(chain_id, currency, listed.symbol, amount, listed.decimals, usd or 0)


def _check_addresses(addresses: dict[str, str]) -> dict[str, str]:
    evm = addresses.get("evm")
    if evm is None or not is_address(evm):
        raise BadRequest(
            "addresses.evm must be the EVM address that signs the solver's bids",
            error_code="INVALID_ADDRESS",
        )
    if "svm" in addresses and not is_svm_address(addresses["svm"]):
        raise BadRequest("addresses.svm must be a base58 SVM address", error_code="INVALID_ADDRESS")
    return {**addresses, "evm": evm.lower()}


def _check_url(url: str) -> str:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        raise BadRequest("bidUrl must be an http(s) URL", error_code="INVALID_URL")
    return url


def _apply(runtime: Runtime, row: Solver, changes: SolverChanges, now: datetime) -> None:
    if changes.addresses is not None:
        addresses = _check_addresses(changes.addresses)
        row.addresses, row.evm_address = addresses, addresses["evm"]
    if changes.bid_url is not None:
        row.bid_url = _check_url(changes.bid_url)
    if changes.routes is not None:
        check_routes(runtime, changes.routes)
        row.routes = store.routes_json(changes.routes)
    if changes.max_size_usd is not None:
        row.max_size_usd_micros = _usd_micros(changes.max_size_usd)
    if changes.reputation is not None:
        row.reputation = changes.reputation
    if changes.clear_cooldown:
        row.cooldown_until = None
    elif changes.cooldown_until is not None:
        row.cooldown_until = changes.cooldown_until
    row.updated_at = now


async def _view(runtime: Runtime, row: Solver) -> SolverView:
    solver = store.registered(row)
    async with runtime.sessions() as session:
        outstanding = await store.outstanding_usd_micros(
            session, [solver.evm_address], now=datetime.now(UTC)
        )
        fades = await solver_fades.of_solvers(session, [row.id], latest=FADES_SHOWN)
    return SolverView(
        solver,
        await bonds_of(runtime, solver),
        outstanding.get(solver.evm_address, 0),
        row.created_at,
        row.updated_at,
        row.consecutive_fades,
        tuple(fades[row.id]),
    )


async def _unique(session: AsyncSession, row: Solver) -> None:
    named = await store.by_name(session, row.name)
    if named is not None and named is not row:
        raise Conflict(f"a solver named {row.name!r} is registered", error_code="SOLVER_EXISTS")
    same = await store.by_evm_address(session, row.evm_address)
    if same is not None and same is not row:
        raise Conflict(
            f"{row.evm_address} is solver {same.name!r}'s address", error_code="SOLVER_EXISTS"
        )


async def register(runtime: Runtime, name: str, changes: SolverChanges) -> SolverView:
    """A new solver: every field of `changes` but the cooldown is required."""
    if changes.addresses is None or changes.bid_url is None or changes.routes is None:
        raise BadRequest("addresses, bidUrl and routes are required", error_code="INVALID_SOLVER")
    if changes.max_size_usd is None:
        raise BadRequest("maxSizeUsd is required", error_code="INVALID_MAX_SIZE")
    now = datetime.now(UTC)
    row = Solver(name=name, reputation=DEFAULT_REPUTATION, created_at=now)
    _apply(runtime, row, changes, now)
    async with runtime.sessions() as session, session.begin():
        await _unique(session, row)
        session.add(row)
    runtime.solver_book.forget_registry()
    return await _view(runtime, row)


async def update(runtime: Runtime, name: str, changes: SolverChanges) -> SolverView:
    async with runtime.sessions() as session, session.begin():
        row = await _named(session, name)
        _apply(runtime, row, changes, datetime.now(UTC))
        await _unique(session, row)
    runtime.solver_book.forget_registry()
    return await _view(runtime, row)


async def remove(runtime: Runtime, name: str) -> None:
    async with runtime.sessions() as session, session.begin():
        await session.delete(await _named(session, name))
    runtime.solver_book.forget_registry()


async def show(runtime: Runtime, name: str) -> SolverView:
    async with runtime.sessions() as session:
        row = await _named(session, name)
    return await _view(runtime, row)


async def listing(runtime: Runtime) -> list[SolverView]:
    async with runtime.sessions() as session:
        rows = await store.all_solvers(session)
    return [await _view(runtime, row) for row in rows]


async def _named(session: AsyncSession, name: str) -> Solver:
    row = await store.by_name(session, name)
    if row is None:
        raise NotFound(f"No solver named {name!r}", error_code="SOLVER_NOT_FOUND")
    return row
