"""The client's tests. End-to-end ones run against the real service with its workers on a
devnet of their test file's own (module scope: the EVM chains, and the SVM node or the perps
exchange when the file's `deployment` serves them), started with the suite's own launchers
(`tests.support`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import JsonValue

from client_devnet import OPERATOR_TOKEN
from crossfill.config import Deployment
from tests.e2e.perps.conftest import exchange
from tests.e2e.svm.conftest import svm_node
from tests.support.devnets import RunningDevnet, running_devnet
from tests.support.service import ServiceThread, service_settings

RECORDED = Path(__file__).parent / "recorded"
# The suite's own module-scoped fixtures, for the files here that need them: the SVM node and
# the perps exchange.
__all__ = ["exchange", "svm_node"]


def recorded(name: str) -> JsonValue:
    """An answer recorded from the devnet service (`recorded/<name>.json`)."""
    document: JsonValue = json.loads((RECORDED / f"{name}.json").read_text())
    return document


@pytest.fixture(scope="module")
def devnet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningDevnet]:
    with running_devnet(tmp_path_factory.mktemp("devnet")) as running:
        yield running


@pytest.fixture(scope="module")
def deployment(devnet: RunningDevnet) -> Deployment:
    """What the service serves: the EVM chains (a test file may add the SVM chain or the
    exchange by overriding this fixture)."""
    return devnet.deployment


@pytest.fixture(scope="module")
def service(
    devnet: RunningDevnet, deployment: Deployment, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServiceThread]:
    """The service with its workers, for every test of the file."""
    settings = service_settings(
        tmp_path_factory.mktemp("service"), devnet.deployment_path, admin_token=OPERATOR_TOKEN
    )
    running = ServiceThread(settings, deployment, run_workers=True).start()
    yield running
    running.stop()
