"""`crossfill db prune-quotes` as an operator runs it beside the service: a quote nobody acted
on, long expired, is gone (its status unknown); a fresh one stays."""

from __future__ import annotations

import sqlite3
import subprocess
from datetime import UTC, datetime, timedelta

import httpx

from tests.conftest import RunningDevnet
from tests.e2e.bridging import funded_user, native_bridge, request_quote
from tests.support.service import ServiceThread, run_cli


def _expire(service: ServiceThread, request_id: str, days_ago: int) -> None:
    """Backdate a quote's expiry in the service's SQLite database."""
    expired = (datetime.now(UTC) - timedelta(days=days_ago)).strftime("%Y-%m-%d %H:%M:%S.%f")
    database = service.settings.database.removeprefix("sqlite+aiosqlite:///")
    with sqlite3.connect(database) as connection:
        connection.execute("UPDATE requests SET expires_at = ? WHERE id = ?", (expired, request_id))


def test_prune_quotes_deletes_long_expired_quotes_nobody_acted_on(
    devnet: RunningDevnet, service: ServiceThread, client: httpx.Client
) -> None:
    user = funded_user(devnet)
    old, fresh = (
        request_quote(client, native_bridge(user.address))["steps"][0]["requestId"]
        for _ in range(2)
    )
    _expire(service, old, days_ago=10)

    def prune_quotes(*options: str) -> subprocess.CompletedProcess[str]:
        return run_cli(
            "db", "prune-quotes", *options,
            home=service.settings.home, deployment_file=devnet.deployment_path,
        )  # fmt: skip

    counted = prune_quotes("--dry-run")
    assert counted.returncode == 0, counted.stderr
    assert counted.stdout.startswith("would prune 1 quotes expired before")
    assert client.get("/intents/status/v3", params={"requestId": old}).status_code == 200

    pruned = prune_quotes()
    assert pruned.returncode == 0, pruned.stderr
    assert pruned.stdout.startswith("pruned 1 quotes expired before")
    assert client.get("/intents/status/v3", params={"requestId": old}).status_code == 404
    assert client.get("/intents/status/v3", params={"requestId": fresh}).status_code == 200

    refused = prune_quotes("--expired-days", "0.5")
    assert refused.returncode != 0  # less than a day: refused, nothing pruned
