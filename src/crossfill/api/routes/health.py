"""Liveness and readiness probes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.schemas.responses import Alive, Ready
from crossfill.errors import ChainError, StoreError
from crossfill.kinds.port import KindChain
from crossfill.runtime import Runtime
from crossfill.store import chain_controls
from crossfill.store.db import ping
from crossfill.store.write_probe import probe_write
from crossfill.types import ChainId

router = APIRouter(tags=["health"])

T = TypeVar("T")


@router.get("/healthz", response_model=None, responses=responses(Alive))
async def healthz() -> dict[str, str]:
    """The process is up and serving."""
    return {"status": "ok"}


# A chain's readiness check: raises ChainError unless its endpoint serves it.
ChainCheck = Callable[[], Awaitable[object]]


def _checks_of(runtime: Runtime) -> dict[int, ChainCheck]:
    """Every configured chain's check, by chain id (each kind's own: `KindChain.check`)."""
    return {chain_id: chain.check for chain_id, chain in runtime.kind_chains.items()}


async def _chain_check(check: ChainCheck) -> str:
    try:
        await check()
    except ChainError as exc:
        return str(exc)
    return "ok"


class Fresh(Generic[T]):
    """One result of an async check, shared by the probes of one second: /readyz is public
    and unlimited, so a flood of probes must not become a flood of RPC calls to the nodes
    or of writes to the database."""

    FRESH_SECONDS = 1.0

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._checked: tuple[float, T] | None = None

    async def get(self, check: Callable[[], Awaitable[T]]) -> T:
        async with self._lock:
            now = time.monotonic()
            if self._checked is None or now - self._checked[0] > self.FRESH_SECONDS:
                self._checked = (now, await check())
            return self._checked[1]


class ReadinessChecks:
    """The chains' checks and the database's write probe, each shared by the probes of one
    second."""

    def __init__(self) -> None:
        self._chains: Fresh[dict[int, str]] = Fresh()
        self._write: Fresh[str] = Fresh()

    async def results(self, checks: dict[int, ChainCheck]) -> dict[int, str]:
        return await self._chains.get(lambda: _check_chains(checks))

    async def database_write(self, engine: AsyncEngine) -> str:
        return await self._write.get(lambda: _check_write(engine))


async def _check_chains(checks: dict[int, ChainCheck]) -> dict[int, str]:
    found = await asyncio.gather(*(_chain_check(check) for check in checks.values()))
    return dict(zip(checks, found, strict=True))


async def _check_write(engine: AsyncEngine) -> str:
    try:
        await probe_write(engine)
    except StoreError as exc:
        return str(exc)
    return "ok"


async def _enabled_chain_ids(runtime: Runtime, chain_ids: list[int]) -> list[int]:
    """Those of `chain_ids` not disabled, by the operator's overrides as stored now."""
    async with runtime.sessions() as session:
        overrides = await chain_controls.disabled_overrides(session)
    return [
        chain_id
        for chain_id in chain_ids
        if not overrides.get(chain_id, runtime.configured_disabled(chain_id))
    ]


def _by_chain(
    runtime: Runtime, chain_ids: list[int], read: Callable[[KindChain], dict[str, str]]
) -> dict[str, dict[str, str]]:
    """What `read` finds of each chain, by chain id; chains where it finds nothing left out."""
    shown: dict[str, dict[str, str]] = {}
    for chain_id in chain_ids:
        found = read(runtime.kind_chains[ChainId(chain_id)])
        if found:
            shown[str(chain_id)] = found
    return shown


def _shortfalls(runtime: Runtime, chain_ids: list[int]) -> dict[str, dict[str, str]]:
    """By chain id, then currency symbol: what the solver's balance lacks (whole units) for
    the fills waiting on it there (`KindChain.solver_shortfall`)."""
    return _by_chain(runtime, chain_ids, lambda chain: chain.solver_shortfall())


def _low_on_gas(runtime: Runtime, chain_ids: list[int]) -> dict[str, dict[str, str]]:
    """By chain id, then key role: the sending keys below their minimum gas balance that are
    not being topped up (`KindChain.low_on_gas`)."""
    return _by_chain(runtime, chain_ids, lambda chain: chain.low_on_gas())


def _rebalancing(runtime: Runtime, chain_ids: list[int]) -> dict[str, dict[str, str]]:
    """By chain id, then currency symbol: what keeps the rebalancer from refilling the
    solver's inventory there (`KindChain.rebalancing`)."""
    return _by_chain(runtime, chain_ids, lambda chain: chain.rebalancing())


@dataclass(frozen=True)
class Readiness:
    """What `/readyz` found: the database's write probe and each enabled chain's check ("ok"
    or what failed), what the solver's balance lacks where fills wait on it, the keys low
    on gas, and what keeps the rebalancer from refilling a chain."""

    database: str
    chains: dict[int, str]
    shortfalls: dict[str, dict[str, str]]
    low_on_gas: dict[str, dict[str, str]]
    rebalancing: dict[str, dict[str, str]]

    @property
    def problems(self) -> list[str]:
        failing = sorted(str(chain_id) for chain_id, found in self.chains.items() if found != "ok")
        problems = [self.database] if self.database != "ok" else []
        if failing:
            problems.append(f"chains not reachable: {', '.join(failing)}")
        return problems


async def readiness(runtime: Runtime, checker: ReadinessChecks) -> Readiness:
    """The checks `/readyz` runs (each shared by the probes of one second); raises StoreError
    when the database does not answer at all."""
    checks_by_chain = _checks_of(runtime)
    await ping(runtime.engine)
    enabled = await _enabled_chain_ids(runtime, list(checks_by_chain))
    database = await checker.database_write(runtime.engine)
    results = await checker.results(checks_by_chain)
    by_chain = {chain_id: results[chain_id] for chain_id in enabled}
    return Readiness(
        database,
        by_chain,
        _shortfalls(runtime, enabled),
        _low_on_gas(runtime, enabled),
        _rebalancing(runtime, enabled),
    )


@router.get("/readyz", response_model=None, responses=responses(Ready, 503))
async def readyz(runtime: RuntimeDep, request: Request) -> JSONResponse:
    """Ready when the database answers and takes a write, and every enabled chain's endpoint
    serves it, whatever its kind. What the solver's balance lacks for fills waiting on it
    (`solverShortfall`), the sending keys low on gas that are not being topped up
    (`keysLowOnGas`) and what keeps the rebalancer from refilling a chain (`rebalancing`) are
    shown without making the service unready: it still answers, fills other chains and
    refunds. A process asked to stop is unready while it drains
    (`api.draining`), whatever the checks would find."""
    if request.app.state.drain.active:
        return JSONResponse(
            {"message": "draining: stopping", "statusCode": 503, "checks": {"draining": True}},
            503,
        )
    try:
        found = await readiness(runtime, request.app.state.readiness_checks)
    except StoreError as exc:
        return JSONResponse(
            {"message": str(exc), "statusCode": 503, "checks": {"database": str(exc)}}, 503
        )
    by_chain = {str(chain_id): result for chain_id, result in found.chains.items()}
    checks: dict[str, object] = {"database": found.database, "chains": by_chain}
    if found.shortfalls:
        checks["solverShortfall"] = found.shortfalls
    if found.low_on_gas:
        checks["keysLowOnGas"] = found.low_on_gas
    if found.rebalancing:
        checks["rebalancing"] = found.rebalancing
    if found.problems:
        return JSONResponse(
            {"message": "; ".join(found.problems), "statusCode": 503, "checks": checks}, 503
        )
    return JSONResponse({"status": "ready", "checks": checks})
