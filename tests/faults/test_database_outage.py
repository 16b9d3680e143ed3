"""The database goes away under a running `crossfill run` on PostgreSQL, through a TCP relay in
front of the server: restarted (every connection cut, new ones refused) or behind a network cut
that loses packets silently (nothing answers, nothing closes). Meanwhile clients are answered
503 in the error shape, on the connection they came on, within the database timeout, and a
deposit sent meanwhile is filled once when the database is back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import pytest
from eth_account import Account

from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    fills_journalled,
    final_status,
    funded_user,
    native_bridge,
    quote_request_id,
    request_quote,
    rpc_urls,
)
from tests.e2e.conftest import validate_against
from tests.support.service import ServiceProcess, service_settings
from tests.support.tcp_relay import TcpRelay
from tests.support.wallets.evm import execute_steps

POSTGRES_PORT = 5432
# Short, for a short test; long enough for a statement on a machine running the whole suite.
DATABASE_TIMEOUT_SECONDS = 2
# A client gives up well after the service should have answered: a request the database
# holds without limit fails the test instead of passing late.
CLIENT_TIMEOUT_SECONDS = 10 * DATABASE_TIMEOUT_SECONDS


def _through(url: str, port: int) -> str:
    return urlunsplit(urlsplit(url)._replace(netloc=f"postgres@127.0.0.1:{port}"))


@pytest.fixture
def relay() -> Iterator[TcpRelay]:
    relay = TcpRelay(POSTGRES_PORT).start()
    try:
        yield relay
    finally:
        relay.stop()


@pytest.fixture
def service(
    devnet: RunningDevnet, postgres_url: str, relay: TcpRelay, tmp_path: Path
) -> Iterator[ServiceProcess]:
    settings = service_settings(
        tmp_path,
        devnet.deployment_path,
        database_url=_through(postgres_url, relay.port),
        database_timeout_seconds=DATABASE_TIMEOUT_SECONDS,
    )
    service = ServiceProcess(settings)
    with service.running():
        yield service


def _bridge_quote(http: httpx.Client, user: Any) -> dict[str, Any]:
    return request_quote(http, native_bridge(user.address, recipient=Account.create().address))


def _answers_during_outage(http: httpx.Client, user: str, request_id: str) -> None:
    """Every route that reads or writes the database: 503 in the error shape."""
    quoted = http.post("/quote/v2", json=native_bridge(user))
    assert quoted.status_code == 503, quoted.text
    assert quoted.json()["errorCode"] == "SERVICE_UNAVAILABLE"
    validate_against("quote-error", quoted.json())
    ready = http.get("/readyz")
    assert ready.status_code == 503, ready.text
    assert ready.json()["checks"]["database"] != "ok"
    for path, params, headers in (
        ("/intents/status/v3", {"requestId": request_id}, {}),
        ("/requests/v3", {}, {"x-api-key": "a key the database would have to look up"}),
        ("/chains", {}, {}),
    ):
        answer = http.get(path, params=params, headers=headers)
        assert answer.status_code == 503, (path, answer.text)
        assert answer.json() == {
            "message": "the database did not answer; try again",
            "statusCode": 503,
        }
        assert answer.headers["retry-after"] == "1"
    assert http.get("/healthz").status_code == 200


@pytest.mark.parametrize("outage", ["restart", "network cut"])
def test_database_outage_answers_503_and_loses_no_deposit(
    devnet: RunningDevnet,
    postgres_url: str,
    relay: TcpRelay,
    service: ServiceProcess,
    outage: str,
) -> None:
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=CLIENT_TIMEOUT_SECONDS) as http:
        before = _bridge_quote(http, user)
        execute_steps(before, user, rpc_urls(devnet))
        assert final_status(http, quote_request_id(before))["status"] == "success"

        during = _bridge_quote(http, user)
        if outage == "restart":
            relay.drop()
        else:
            relay.stall()
        # Deposited while the service cannot record it: found when the database is back.
        execute_steps(during, user, rpc_urls(devnet))
        _answers_during_outage(http, user.address, quote_request_id(during))
        relay.restore()

        assert final_status(http, quote_request_id(during), timeout=60)["status"] == "success"
        assert http.get("/readyz").status_code == 200
        after = _bridge_quote(http, user)
        execute_steps(after, user, rpc_urls(devnet))
        assert final_status(http, quote_request_id(after))["status"] == "success"
    assert len(fills_journalled(postgres_url, quote_request_id(during))) == 1
    service.assert_log_clean()
