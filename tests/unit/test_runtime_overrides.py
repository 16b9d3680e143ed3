"""The task that refreshes operator overrides outlives a database that fails."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from crossfill import runtime as runtime_module
from crossfill.kinds.registry import KINDS
from crossfill.runtime import Runtime
from crossfill.settings import Settings
from tests.unit.deployment_samples import sample_deployment


async def test_overrides_keep_being_refreshed_while_the_database_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime_module, "OVERRIDES_REFRESH_SECONDS", 0.05)
    # A database file in a folder that does not exist: every session fails to connect.
    settings = Settings(home=tmp_path / "missing" / "folder")
    runtime = Runtime.build(settings, sample_deployment(), kinds=KINDS)
    follower = asyncio.create_task(runtime._follow_overrides())
    try:
        await asyncio.sleep(0.3)
        assert not follower.done(), follower.exception()
    finally:
        follower.cancel()
        await asyncio.gather(follower, return_exceptions=True)
        await runtime.engine.dispose()
