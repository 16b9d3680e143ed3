"""The disk under `crossfill run`'s SQLite database fills up (a tmpfs of its own, filled by
another file): reads go on, quotes are refused 503 in the error shape, /readyz says the
database refuses writes, and a deposit sent meanwhile is filled once after room is made.

Mounting a tmpfs needs root with the mount capability (CI runs as root here); without it the
test is skipped and says why."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from crossfill.kinds.evm.config import evm_chains
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
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps

DISK_BYTES = 32 * 1024 * 1024
CHUNK = b"\0" * (1024 * 1024)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount_point = tmp_path / "disk"
    mount_point.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(mount_point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], check=False)


@pytest.fixture
def service(devnet: RunningDevnet, small_disk: Path, tmp_path: Path) -> Iterator[ServiceProcess]:
    service = ServiceProcess(
        service_settings(small_disk, devnet.deployment_path),
        log_path=tmp_path / "service.log",  # the log is not on the disk that fills
    )
    with service.running():
        yield service


def _fill(disk: Path) -> Path:
    """Write zeros to a file on `disk` until it has no room left."""
    filler = disk / "filler"
    with filler.open("wb") as out:
        try:
            while True:
                out.write(CHUNK)
                out.flush()
        except OSError:
            pass
    return filler


def _readiness(http: httpx.Client) -> httpx.Response:
    return http.get("/readyz")


def _first_refusal(ask: Callable[[], httpx.Response], attempts: int = 300) -> httpx.Response:
    """The first 503 of up to `attempts` asks, 20 ms apart. SQLite keeps writing into the room
    its write-ahead log already holds, and a checkpoint that completes makes that room again:
    on a disk just filled, some writes still go through before every one fails. (Probes also
    share one result a second: the first may be the one from before.)"""
    for _ in range(attempts):
        answer = ask()
        if answer.status_code == 503:
            return answer
        assert answer.status_code == 200, answer.text
        time.sleep(0.02)
    raise AssertionError(f"still answered {answer.status_code} after {attempts} asks")


def _first_refused_quote(http: httpx.Client, user: str) -> httpx.Response:
    return _first_refusal(lambda: http.post("/quote/v2", json=native_bridge(user)))


def test_full_disk_refuses_quotes_says_not_ready_and_loses_no_deposit(
    devnet: RunningDevnet, small_disk: Path, service: ServiceProcess
) -> None:
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        ready = _readiness(http)
        assert ready.status_code == 200, ready.text
        assert ready.json()["checks"]["database"] == "ok"
        during = request_quote(http, native_bridge(user.address))

        filler = _fill(small_disk)
        # Deposited while the disk is full: filled once room is made, if not before.
        execute_steps(during, user, rpc_urls(devnet))
        refused = _first_refused_quote(http, user.address)
        assert refused.json()["errorCode"] == "SERVICE_UNAVAILABLE"
        validate_against("quote-error", refused.json())
        not_ready = _first_refusal(lambda: _readiness(http)).json()
        assert not_ready["checks"]["database"] == "database refuses writes: OperationalError"
        assert not_ready["message"] == "database refuses writes: OperationalError"
        assert not_ready["checks"]["chains"] == {
            str(chain.id): "ok" for chain in evm_chains(devnet.deployment)
        }
        assert http.get("/chains").status_code == 200
        assert http.get("/healthz").status_code == 200

        filler.unlink()
        assert wait_for(lambda: _readiness(http).status_code == 200, timeout=10)
        assert final_status(http, quote_request_id(during), timeout=60)["status"] == "success"
        after = request_quote(http, native_bridge(user.address))
        execute_steps(after, user, rpc_urls(devnet))
        assert final_status(http, quote_request_id(after))["status"] == "success"
    fills = fills_journalled(service.database, quote_request_id(during))
    assert len(fills) == 1
    service.assert_log_clean()
    log = service.log_path.read_text(errors="replace")
    assert "the database refused the write probe: database or disk is full" in log
