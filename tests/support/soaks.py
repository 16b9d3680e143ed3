"""What the long runs against `crossfill run` share (`tests.faults.soak`,
`tests.faults.skewed_soak`): their database, the operator's API key, calls retried while the
service restarts, and a client's deposit hint."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.support.database import (
    create_postgres_database,
    drop_postgres_database,
    postgres_database_url,
    sqlite_url,
)
from tests.support.service import ServiceProcess


def soak_database(kind: str, home: Path, prefix: str) -> tuple[str, Callable[[], None]]:
    """The service's database URL (`kind`: sqlite, in `home`, or postgres, a new database whose
    name starts with `prefix`) and how to drop it afterwards."""
    if kind == "sqlite":
        return sqlite_url(home / "crossfill.db"), lambda: None
    created = asyncio.run(create_postgres_database(prefix))
    return postgres_database_url(created), lambda: asyncio.run(drop_postgres_database(created))


def retrying(action: Callable[[], httpx.Response], timeout: float = 90) -> httpx.Response:
    """Call the service until it answers 2xx: it may be restarting or waiting on a chain."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            response = action()
            if response.status_code < 300 or time.monotonic() > deadline:
                return response
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.3)


def create_api_key(service: ServiceProcess, operator_token: str, name: str) -> str:
    """A new API key, created with the operator token (retried while the service starts)."""
    created = retrying(
        lambda: httpx.post(
            f"{service.base_url}/admin/api-keys",
            json={"name": name},
            headers={"Authorization": f"Bearer {operator_token}"},
            timeout=10,
        )
    )
    key: str = created.json()["key"]
    return key


def hint(process: ServiceProcess, chain_id: int, tx_hash: str) -> None:
    """A client's hint of its deposit; best effort, as a client's (the process may be down)."""
    with contextlib.suppress(httpx.HTTPError):
        httpx.post(
            f"{process.base_url}/transactions/index",
            json={"chainId": chain_id, "txHash": tx_hash},
            timeout=5,
        )
