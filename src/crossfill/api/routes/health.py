"""Liveness and readiness probes."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter
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


async def _enabled_chains(runtime: RuntimeDep) -> list[ChainRuntime]:
    async with runtime.sessions() as session:
        overrides = await chain_controls.disabled_overrides(session)
    return [
        chain
        for chain in runtime.chains.values()
        if not overrides.get(chain.config.id, chain.config.disabled)
    ]


@router.get("/readyz", response_model=None, responses=responses(Ready, 503))
async def readyz(runtime: RuntimeDep) -> JSONResponse:
    """Ready when the database answers and every enabled chain serves its configured id."""
    try:
        await ping(runtime.engine)
        chains = await _enabled_chains(runtime)
    except StoreError as exc:
        return JSONResponse(
            {"message": str(exc), "statusCode": 503, "checks": {"database": str(exc)}}, 503
        )
    results = await asyncio.gather(*(_chain_check(chain) for chain in chains))
    chain_checks = {
        str(chain.config.id): result for chain, result in zip(chains, results, strict=True)
    }
    checks = {"database": "ok", "chains": chain_checks}
    failing = sorted(chain_id for chain_id, result in chain_checks.items() if result != "ok")
    if failing:
        message = f"chains not reachable: {', '.join(failing)}"
        return JSONResponse({"message": message, "statusCode": 503, "checks": checks}, 503)
    return JSONResponse({"status": "ready", "checks": checks})
