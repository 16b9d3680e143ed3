"""The real service over HTTP on the session devnet: `start_service` runs it in this process
(`tests.support.service.ServiceThread`), stopped after the test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from crossfill.config import Deployment
from tests.conftest import RunningDevnet
from tests.e2e.bridging import rpc_urls
from tests.e2e.user_client import UserClient, UserClients
from tests.e2e.wire import validate_against
from tests.support.service import ServiceThread, StartService, service_settings

# The wire check, imported from here by many of the suite's files.
__all__ = ["validate_against"]


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request: pytest.FixtureRequest) -> str | None:
    """For tests run on each backend: None, the service's default SQLite file; else a fresh
    PostgreSQL database (pass it as the service's `database_url`)."""
    if request.param == "sqlite":
        return None
    url: str = request.getfixturevalue("postgres_url")
    return url


def on_database(database: str | None, **settings: Any) -> dict[str, Any]:
    """Service settings with the `database` fixture's backend."""
    return settings if database is None else {**settings, "database_url": database}


@pytest.fixture
def start_service(devnet: RunningDevnet, tmp_path: Path) -> Iterator[StartService]:
    started: list[ServiceThread] = []

    def _start(
        deployment: Deployment | None = None,
        *,
        run_workers: bool = False,
        settings: dict[str, Any] | None = None,
        **app_options: Any,
    ) -> ServiceThread:
        chosen = service_settings(tmp_path, devnet.deployment_path, **(settings or {}))
        service = ServiceThread(
            chosen, deployment or devnet.deployment, run_workers=run_workers, **app_options
        ).start()
        started.append(service)
        return service

    yield _start
    for service in started:
        service.stop()


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service()


@pytest.fixture
def client(service: ServiceThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        yield http


@pytest.fixture
def chain_urls(devnet: RunningDevnet) -> dict[int, str]:
    """Where a user's wallet sends: each chain's node (a suite with more kinds of chain adds
    theirs)."""
    return rpc_urls(devnet)


@pytest.fixture
def user_clients(service: ServiceThread, chain_urls: dict[int, str]) -> Iterator[UserClients]:
    """Makes Python clients of users of `service` (with an API key, or none), sending through
    `chain_urls`; each closed after the test."""
    made: list[UserClient] = []

    def make(api_key: str | None = None) -> UserClient:
        made.append(UserClient(service.base_url, chain_urls, api_key=api_key))
        return made[-1]

    yield make
    for client in made:
        client.close()


@pytest.fixture
def user_client(user_clients: UserClients) -> UserClient:
    """The Python client of a user of `service`, without an API key."""
    return user_clients()
