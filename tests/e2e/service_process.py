"""`crossfill run` in its own process, as operators run it: for tests that kill it (-9) and
start it again on the same database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from crossfill.devnet.child_process import free_port
from tests.e2e.conftest import wait_for


class ServiceProcess:
    """`crossfill run` as operators run it, on the devnet's deployment and its own database."""

    def __init__(self, home: Path, deployment_path: Path) -> None:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "CROSSFILL_HOME": str(home),
            "CROSSFILL_DEPLOYMENT_FILE": str(deployment_path),
            "CROSSFILL_HEAD_POLL_INTERVAL_SECONDS": "0.2",
            "CROSSFILL_WORKER_INTERVAL_SECONDS": "0.2",
            "CROSSFILL_LOG_LEVEL": "WARNING",
        }
        self.database = f"sqlite+aiosqlite:///{home / 'crossfill.db'}"
        # Every run's log, appended across restarts: what a failing test shows of the service.
        self.log_path = home / "service.log"
        self.options: list[str] = []  # more `crossfill run` options
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "crossfill", "run", "--port", str(self.port), *self.options],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        if not wait_for(self._up, timeout=60, interval=0.2):
            self.stop()  # not left running behind the failure (nor warned about when collected)
            raise AssertionError("service did not come up")

    @contextmanager
    def running(self) -> Iterator[ServiceProcess]:
        """Started, then stopped; the end of its log printed (pytest shows it on a failure)."""
        self.start()
        try:
            yield self
        finally:
            self.stop()
            print(self.log_tail(120))

    def log_tail(self, lines: int = 60) -> str:
        """The end of the service's log (every run so far), for a failing test's message."""
        if not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def assert_log_clean(self) -> None:
        """No request or task of any run so far failed in a way nobody expected."""
        log = self.log_path.read_text(errors="replace")
        assert "unhandled error" not in log, self.log_tail()
        assert "Exception in ASGI application" not in log, self.log_tail()

    def _up(self) -> bool:
        try:
            return httpx.get(f"{self.base_url}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
