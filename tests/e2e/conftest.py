"""The real service over HTTP: uvicorn on a loopback port, on the session devnet."""

from __future__ import annotations

import faulthandler
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest
import uvicorn

from crossfill.config import Deployment
from crossfill.devnet.child_process import free_port
from crossfill.process.server import uvicorn_config
from crossfill.process.service import build_service
from crossfill.runtime import Runtime
from crossfill.settings import Settings
from crossfill.store.migrate import upgrade
from tests.conftest import SCHEMAS_DIR, RunningDevnet


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
            Runtime.build(settings, deployment), run_workers=run_workers, **app_options
        )
        self.server = uvicorn.Server(uvicorn_config(app, settings, port=self.port))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

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


def service_settings(home: Path, deployment_path: Path) -> Settings:
    return Settings(
        home=home,
        deployment_file=deployment_path,
        head_poll_interval_seconds=0.2,
        worker_interval_seconds=0.2,
        log_level="WARNING",
    )


StartService = Callable[..., ServiceThread]


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
        chosen = service_settings(tmp_path, devnet.deployment_path).model_copy(
            update=settings or {}
        )
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


def validate_against(schema_name: str, document: object) -> None:
    schema = json.loads((SCHEMAS_DIR / f"{schema_name}.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(document)


def wait_for(predicate: Callable[[], bool], *, timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
