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


def test_the_replicas_drain_beside_the_main_process(
    devnet: RunningDevnet, tmp_path: Path, postgres_url: str
) -> None:
    """With several API processes on one port, a SIGTERM to the main process (as a process
    manager sends it) makes every process unready at once: no connection reaches a replica
    still answering ready while the main process drains."""
    settings = service_settings(
        tmp_path, devnet.deployment_path, drain_seconds=60, api_processes=3,
        database_url=postgres_url,
    )  # fmt: skip
    service = ServiceProcess(settings, ready_path="/readyz").start()
    try:
        process = service.process
        assert process is not None
        with httpx.Client(base_url=service.base_url, timeout=10) as http:
            # Before: every process ready (each request on a fresh connection, spread over
            # the processes sharing the port).
            before = {_fresh_readyz(service.base_url) for _ in range(12)}
            assert before == {200}, before
            process.send_signal(signal.SIGTERM)
            assert wait_for(lambda: http.get("/healthz").status_code == 200, timeout=5)

            def all_unready() -> bool:
                return {_fresh_readyz(service.base_url) for _ in range(12)} == {503}

            assert wait_for(all_unready, timeout=5, interval=0.2)
        process.send_signal(signal.SIGTERM)  # the second: stop now
        assert wait_for(lambda: process.poll() is not None, timeout=30, interval=0.1)
    finally:
        exit_code = service.stop()
    assert exit_code == 0, service.log_tail()


def _fresh_readyz(base_url: str) -> int:
    """`/readyz` on a connection of its own (a kept-alive one would stay on one process)."""
    with httpx.Client(base_url=base_url, timeout=10) as http:
        return http.get("/readyz").status_code
