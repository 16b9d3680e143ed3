"""Liveness and readiness probes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.schemas.responses import Alive, Ready
from crossfill.errors import ChainError, StoreError
from crossfill.runtime import ChainRuntime
from crossfill.store import chain_controls
from crossfill.store.db import ping
from crossfill.store.write_probe import probe_write

router = APIRouter(tags=["health"])

T = TypeVar("T")


@router.get("/healthz", response_model=None, responses=responses(Alive))
async def healthz() -> dict[str, str]:
    """The process is up and serving."""
    return {"status": "ok"}


async def _chain_check(chain: ChainRuntime) -> str:
    try:
        await chain.client.check_identity()
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


class ChainChecks:
    """The chains' identity checks and the database's write probe, each shared by the probes
    of one second."""

    def __init__(self) -> None:
        self._chains: Fresh[dict[int, str]] = Fresh()
        self._write: Fresh[str] = Fresh()

    async def results(self, chains: list[ChainRuntime]) -> dict[int, str]:
        checked = await self._chains.get(lambda: _check_chains(chains))
        return {chain.config.id: checked.get(chain.config.id, "not checked") for chain in chains}

    async def database_write(self, engine: AsyncEngine) -> str:
        return await self._write.get(lambda: _check_write(engine))


async def _check_chains(chains: list[ChainRuntime]) -> dict[int, str]:
    found = await asyncio.gather(*(_chain_check(chain) for chain in chains))
    return {chain.config.id: result for chain, result in zip(chains, found, strict=True)}


async def _check_write(engine: AsyncEngine) -> str:
    try:
        await probe_write(engine)
    except StoreError as exc:
        return str(exc)
    return "ok"


async def _enabled_chains(runtime: RuntimeDep) -> list[ChainRuntime]:
    async with runtime.sessions() as session:
        overrides = await chain_controls.disabled_overrides(session)
    return [
        chain
        for chain in runtime.chains.values()
        if not overrides.get(chain.config.id, chain.config.disabled)
    ]


@router.get("/readyz", response_model=None, responses=responses(Ready, 503))
async def readyz(runtime: RuntimeDep, request: Request) -> JSONResponse:
    """Ready when the database answers and takes a write, and every enabled chain serves its
    configured id."""
    try:
        await ping(runtime.engine)
        chains = await _enabled_chains(runtime)
    except StoreError as exc:
        return JSONResponse(
            {"message": str(exc), "statusCode": 503, "checks": {"database": str(exc)}}, 503
        )
    checker: ChainChecks = request.app.state.chain_checks
    database = await checker.database_write(runtime.engine)
    results = await checker.results(list(runtime.chains.values()))
    chain_checks = {str(chain.config.id): results[chain.config.id] for chain in chains}
    checks = {"database": database, "chains": chain_checks}
    failing = sorted(chain_id for chain_id, result in chain_checks.items() if result != "ok")
    problems = [database] if database != "ok" else []
    if failing:
        problems.append(f"chains not reachable: {', '.join(failing)}")
    if problems:
        return JSONResponse(
            {"message": "; ".join(problems), "statusCode": 503, "checks": checks}, 503
        )
    return JSONResponse({"status": "ready", "checks": checks})
