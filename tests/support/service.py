"""The service as tests, the fault soak and the benchmarks run it, on a deployment and a
database of their choosing, from one `Settings`:

- `ServiceThread`: the app under uvicorn in a thread of this process, for tests that reach into
  it (its clock, its logging, its memory);
- `ServiceProcess`: `crossfill run` (or another command that serves) in a process of its own,
  as operators run it, for tests that kill it, restart it or run several; its settings reach it
  as the `CROSSFILL_*` environment.

`service_settings` gives the tests' settings: their home, their deployment, fast polls.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from pydantic import AliasChoices

from crossfill.config import Deployment
from crossfill.devnet.child_process import free_port
from crossfill.devnet.kinds import devnet_kinds
from crossfill.process.server import uvicorn_config
from crossfill.process.service import build_service
from crossfill.runtime import Runtime
from crossfill.settings import Settings
from crossfill.store.migrate import upgrade
from tests.support.hosts import Host
from tests.support.waiting import wait_for


def service_settings(home: Path, deployment_path: Path, **overrides: Any) -> Settings:
    """The tests' service settings: `home` (the SQLite database, keys) and the deployment file
    at `deployment_path`, heads and workers polled every 0.2 s, warnings logged; `overrides`
    (setting name → value) on top."""
    settings = Settings(
        home=home,
        deployment_file=deployment_path,
        head_poll_interval_seconds=0.2,
        worker_interval_seconds=0.2,
        log_level="WARNING",
    )
    return settings.model_copy(update=overrides)


class ServiceThread:
    """Runs the app under uvicorn in a thread; `base_url` answers until `stop()`."""

    def __init__(
        self,
        settings: Settings,
        deployment: Deployment,
        *,
        run_workers: bool = False,
        **app_options: Any,
    ) -> None:
        upgrade(settings.database)
        self.settings = settings
        self.deployment = deployment
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        app = build_service(
            Runtime.build(settings, deployment, kinds=devnet_kinds()),
            run_workers=run_workers,
            **app_options,
        )
        self.server = uvicorn.Server(uvicorn_config(app, settings, port=self.port))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def database(self) -> str:
        """The SQLAlchemy URL of the service's database."""
        return self.settings.database

    def start(self) -> ServiceThread:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("service did not start")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        """Stopped as Ctrl-C stops it; a stop that hangs fails the test that started it."""
        self.server.should_exit = True
        self.thread.join(20)
        if self.thread.is_alive():
            # Where each thread is, the service's event loop among them: what held the stop.
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
            raise RuntimeError("the service did not stop within 20 s of its stop")


# The `start_service` fixture: (deployment=None, *, run_workers=False, settings=None,
# **app_options) -> a started ServiceThread, stopped after the test.
StartService = Callable[..., ServiceThread]


def settings_environment(settings: Settings) -> dict[str, str]:
    """The environment variables that give a `crossfill` process `settings` (those set, from
    arguments or this process's environment)."""
    return {
        _variable(name): _text(getattr(settings, name))
        for name in sorted(settings.model_fields_set)
        if getattr(settings, name) is not None
    }


def _variable(name: str) -> str:
    alias = Settings.model_fields[name].validation_alias
    if isinstance(alias, AliasChoices):  # a variable another library reads too, by its name
        return str(alias.choices[0])
    return f"CROSSFILL_{name.upper()}"


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, str | int | float | Path):
        return str(value)
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    raise TypeError(f"no environment form for {value!r}")


class ServiceProcess:
    """`crossfill run` (by default) in a process of its own on `settings`, on a free port:
    started and ready, killed with SIGKILL, started again on the same database, stopped. The
    output of every run is appended to `log_path` (default: `service.log` in its home)."""

    def __init__(
        self,
        settings: Settings,
        *,
        command: Sequence[str] = ("run",),
        options: Sequence[str] = (),
        log_path: Path | None = None,
        ready_path: str = "/healthz",
        ready_timeout: float = 60,
        stop_signal: signal.Signals = signal.SIGTERM,
        host: Host | None = None,
    ) -> None:
        self.port = free_port()
        # On another host (a network namespace: `tests.support.hosts`), it listens on that
        # host's address; here, on `settings.host` (loopback unless set).
        listen = settings.host if host is None else host.address
        self.base_url = f"http://{listen}:{self.port}"
        self.settings = settings.model_copy(update={"port": self.port, "host": listen})
        self.env = {**os.environ, **settings_environment(self.settings)}
        argv = [sys.executable, "-m", "crossfill", *command, *options]
        self.command = argv if host is None else host.command(argv)
        # Every run's log, appended across restarts: what a failing test shows of the service.
        self.log_path = log_path or settings.home / "service.log"
        # Where readiness is asked (`ready_path`); a workers-only process answers on its ops port.
        self.probe_url = self.base_url
        self.ready_path, self.ready_timeout = ready_path, ready_timeout
        self.stop_signal = stop_signal
        self.process: subprocess.Popen[bytes] | None = None

    @classmethod
    def workers_only(
        cls, settings: Settings, *, ops_port: int, host: Host | None = None
    ) -> ServiceProcess:
        """`crossfill run --workers-only --ops-port <ops_port>`: no API; its probes and
        `/metrics` on the ops port."""
        options = ("--workers-only", "--ops-port", str(ops_port))
        service = cls(settings, options=options, host=host)
        service.probe_url = f"http://{service.settings.host}:{ops_port}"
        return service

    @property
    def database(self) -> str:
        """The SQLAlchemy URL of the service's database."""
        return self.settings.database

    @property
    def pid(self) -> int:
        assert self.process is not None, "not started"
        return self.process.pid

    def start(self) -> ServiceProcess:
        """Started, and ready within `ready_timeout` (else stopped and failed, its log shown)."""
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                self.command, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        if not wait_for(self._ready, timeout=self.ready_timeout, interval=0.2):
            self.stop()  # not left running behind the failure (nor warned about when collected)
            raise AssertionError(f"service did not come up:\n{self.log_tail()}")
        return self

    @contextmanager
    def running(self) -> Iterator[ServiceProcess]:
        """Started, then stopped; the end of its log printed (pytest shows it on a failure)."""
        self.start()
        try:
            yield self
        finally:
            self.stop()
            print(self.log_tail(120))

    def run_to_exit(self, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """The command run to its end, its output captured: for a start that must fail."""
        return subprocess.run(
            self.command, env=self.env, capture_output=True, text=True, timeout=timeout
        )

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`crossfill <args>` on the service's settings (its database, its home), as an operator
        runs it beside the service; output captured."""
        return run_cli(*args, environment=self.env)

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

    def _ready(self) -> bool:
        try:
            answer = httpx.get(f"{self.probe_url}{self.ready_path}", timeout=2)
        except httpx.HTTPError:
            return False
        return answer.status_code == 200

    def kill(self) -> None:
        """SIGKILL, as a crash or the kernel's OOM killer ends it: nothing runs on the way out."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self, timeout: float = 15) -> int | None:
        """Stopped with `stop_signal` (killed if it has not ended `timeout` seconds later); its
        exit code, None if it was never started."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            self.process.send_signal(self.stop_signal)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode


def run_cli(
    *args: str, environment: Mapping[str, str] | None = None, **settings: Any
) -> subprocess.CompletedProcess[str]:
    """`crossfill <args>` as an operator runs it, in `environment` (default: this process's)
    with `settings` (setting name → value, e.g. `home=`, `deployment_file=`) on top; output
    captured, within a minute."""
    given = Settings.model_construct(**settings)  # only these, none read from the environment
    env = {**(environment or os.environ), **settings_environment(given)}
    return subprocess.run(
        [sys.executable, "-m", "crossfill", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
