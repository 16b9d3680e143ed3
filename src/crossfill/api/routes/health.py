"""Liveness and readiness probes."""

from __future__ import annotations

import asyncio
import time

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.schemas.responses import Alive, Ready
from crossfill.errors import ChainError, StoreError
from crossfill.runtime import ChainRuntime
from crossfill.store import chain_controls
from crossfill.store.db import ping

router = APIRouter(tags=["health"])


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


class ChainChecks:
    """The chains' identity checks, shared by the probes of one second: /readyz is public and
    unlimited, so a flood of probes must not become a flood of RPC calls to the nodes."""

    FRESH_SECONDS = 1.0

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._checked: tuple[float, dict[int, str]] | None = None

    async def results(self, chains: list[ChainRuntime]) -> dict[int, str]:
        async with self._lock:
            now = time.monotonic()
            if self._checked is None or now - self._checked[0] > self.FRESH_SECONDS:
                everyone = list(chains)
                found = await asyncio.gather(*(_chain_check(chain) for chain in everyone))
                ids = [chain.config.id for chain in everyone]
                self._checked = (now, dict(zip(ids, found, strict=True)))
            checked = self._checked[1]
        return {chain.config.id: checked.get(chain.config.id, "not checked") for chain in chains}


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
    """Ready when the database answers and every enabled chain serves its configured id."""
    try:
        await ping(runtime.engine)
        chains = await _enabled_chains(runtime)
    except StoreError as exc:
        return JSONResponse(
            {"message": str(exc), "statusCode": 503, "checks": {"database": str(exc)}}, 503
        )
    checker: ChainChecks = request.app.state.chain_checks
    results = await checker.results(list(runtime.chains.values()))
    chain_checks = {str(chain.config.id): results[chain.config.id] for chain in chains}
    checks = {"database": "ok", "chains": chain_checks}
    failing = sorted(chain_id for chain_id, result in chain_checks.items() if result != "ok")
    if failing:
        message = f"chains not reachable: {', '.join(failing)}"
        return JSONResponse({"message": message, "statusCode": 503, "checks": checks}, 503)
    return JSONResponse({"status": "ready", "checks": checks})
