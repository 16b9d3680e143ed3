"""What the running service logs about hostile or failing requests: never a secret, and fast.

The service runs with the process's real logging set-up (console or JSON); the requests carry
an API key, the operator token and a websocket `?apiKey=`, fail in every way including one
genuine 500, and the whole log output is searched for the secrets.
"""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from crossfill.log_setup import configure_logging
from crossfill.store import api_keys
from tests.support.service import StartService

ADMIN_TOKEN = "operator-token-5b1c7e"
WEBHOOK_SECRET = "webhook-secret-9d2f40"
KEYSTORE_PASSWORD = "keystore-password-a83e11"
WRONG_KEY = "cfk_" + "w" * 43


def _open_socket(url: str) -> str:
    async def attempt() -> str:
        try:
            async with connect(url) as socket:
                return str(json.loads(await socket.recv())["status"])
        except InvalidStatus as refused:
            return str(refused.response.status_code)
        except ConnectionClosed as closed:
            return str(closed.rcvd.code if closed.rcvd else None)

    return asyncio.run(attempt())


@pytest.mark.usefixtures("root_logging")
@pytest.mark.parametrize("log_format", ["console", "json"])
def test_failing_requests_log_no_secret_and_a_500_costs_milliseconds(
    start_service: StartService,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    log_format: str,
) -> None:
    configure_logging(
        json_logs=log_format == "json",
        level="INFO",
        secrets=[ADMIN_TOKEN, WEBHOOK_SECRET, KEYSTORE_PASSWORD],
    )
    service = start_service(
        settings={
            "admin_token": ADMIN_TOKEN,
            "webhook_secret": WEBHOOK_SECRET,
            "keystore_password": KEYSTORE_PASSWORD,
            "log_level": "INFO",
            "log_format": log_format,
        }
    )
    operator = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        created = http.post("/admin/api-keys", json={"name": "logged"}, headers=operator)
        key: str = created.json()["key"]
        assert http.post("/admin/api-keys", json={}, headers=operator).status_code == 400
        assert http.get("/chains", headers={"x-api-key": WRONG_KEY}).status_code == 401

        def database_gone(*_args: object, **_kwargs: object) -> None:
            raise RuntimeError("database gone")

        # A genuine 500 while the key is being checked: the failing frames hold the key.
        monkeypatch.setattr(api_keys, "authenticate", database_gone)
        started = time.perf_counter()
        # On a connection of its own: uvicorn closes the connection an exception escaped on.
        failed = httpx.get(
            f"{service.base_url}/requests/v3",
            headers={"x-api-key": key, **operator},
            timeout=30,
        )
        took = time.perf_counter() - started
        monkeypatch.undo()
        assert failed.status_code == 500 and failed.json()["errorCode"] == "UNKNOWN_ERROR"
        assert http.post("/quote/v2", json={}, headers={"x-api-key": key}).status_code == 400

    socket_url = service.base_url.replace("http://", "ws://")
    assert _open_socket(f"{socket_url}/ws?apiKey={key}") == "ready"
    assert _open_socket(f"{socket_url}/ws?apiKey={WRONG_KEY}") == "1008"
    service.stop()

    captured = capsys.readouterr()
    logged = captured.out + captured.err
    assert "unhandled error" in logged and "RuntimeError: database gone" in logged
    for secret in (key, WRONG_KEY, ADMIN_TOKEN, WEBHOOK_SECRET, KEYSTORE_PASSWORD):
        assert secret not in logged
    assert took < 0.5, f"a 500 took {took:.2f} s"
    assert "/ws?apiKey=" in logged  # the socket's handshake log line, scrubbed
    if log_format == "json":
        for line in filter(None, logged.splitlines()):
            json.loads(line)
