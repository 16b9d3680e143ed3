"""A stop that drains (`CROSSFILL_DRAIN_SECONDS`): after SIGTERM the process goes on serving,
unready (`/readyz` 503, `checks.draining`) and closing each connection after its answer, then
stops by itself once the drain is over; a second SIGTERM stops it at once."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import RunningDevnet
from tests.support.service import ServiceProcess, service_settings
from tests.support.waiting import wait_for


@pytest.mark.parametrize(("drain_seconds", "signals"), [(3, 1), (60, 2)])
def test_a_stopped_process_drains_unready_then_stops(
    devnet: RunningDevnet, tmp_path: Path, drain_seconds: float, signals: int
) -> None:
    settings = service_settings(tmp_path, devnet.deployment_path, drain_seconds=drain_seconds)
    service = ServiceProcess(settings, ready_path="/readyz").start()
    try:
        process = service.process
        assert process is not None
        process.send_signal(signal.SIGTERM)
        asked = time.monotonic()
        with httpx.Client(base_url=service.base_url, timeout=10) as http:
            unready = http.get("/readyz")
            assert unready.status_code == 503, unready.text
            assert unready.json()["checks"] == {"draining": True}
            alive = http.get("/healthz")
            assert alive.status_code == 200
            assert alive.headers["connection"] == "close"
        assert process.poll() is None, "stopped without draining"
        if signals == 2:
            process.send_signal(signal.SIGTERM)
        assert wait_for(lambda: process.poll() is not None, timeout=30, interval=0.1)
        took = time.monotonic() - asked
    finally:
        exit_code = service.stop()
    assert exit_code == 0, service.log_tail()
    if signals == 1:
        assert took >= drain_seconds - 0.5, took
    else:
        assert took < 20, took
