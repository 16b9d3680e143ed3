"""Dependency aliases for routes."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from crossfill.runtime import Runtime


def _runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(_runtime)]
