"""Fixtures shared by every suite: a devnet of real anvil chains, and a PostgreSQL database."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from hypothesis import HealthCheck, settings

import crossfill.api
from tests.support.database import (
    PostgresUnreachable,
    create_postgres_database,
    drop_postgres_database,
    postgres_database_url,
)
from tests.support.devnets import RunningDevnet, running_devnet

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=40
)
settings.load_profile("default")

# The wire-shape schemas the service's OpenAPI document also uses (package data).
SCHEMAS_DIR = Path(crossfill.api.__file__).resolve().parent / "wire_schemas"


__all__ = ["SCHEMAS_DIR", "RunningDevnet"]


@pytest.fixture(scope="session")
def devnet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDevnet]:
    """Two automining anvil chains with everything deployed and seeded."""
    with running_devnet(tmp_path_factory.mktemp("devnet")) as running:
        yield running


def running_in_ci() -> bool:
    return os.environ.get("CI", "").lower() in {"1", "true", "yes"}


async def fresh_postgres_database() -> str:
    """A new PostgreSQL database's name. Without a reachable server the test is skipped, or
    fails under CI=true."""
    try:
        return await create_postgres_database()
    except PostgresUnreachable as exc:
        if running_in_ci():
            pytest.fail(str(exc))
        pytest.skip(str(exc))


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database (SQLAlchemy URL), dropped after the test."""
    name = asyncio.run(fresh_postgres_database())
    try:
        yield postgres_database_url(name)
    finally:
        asyncio.run(drop_postgres_database(name))


@pytest.fixture
def root_logging() -> Iterator[None]:
    """For tests that configure the process's logging: afterwards the root logger and
    structlog are as they were."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.reset_defaults()
