"""Dependency aliases for routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from crossfill.runtime import Runtime


async def _runtime(request: Request) -> Runtime:
    """async: FastAPI runs a plain `def` dependency in its thread pool, a thread round trip
    on every request for an attribute read."""
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(_runtime)]
