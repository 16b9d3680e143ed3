"""The SVM chain beside the session's EVM devnet: a node per module, and the service with
workers on a deployment that includes it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from crossfill.config import Deployment
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from tests.conftest import RunningDevnet
from tests.support.devnets import running_svm_node, with_svm_chain
from tests.support.service import StartService


@pytest.fixture(scope="module")
def svm_node(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[SvmNodeProcess, SeededSvm]]:
    with running_svm_node(tmp_path_factory.mktemp("svm")) as node_and_seed:
        yield node_and_seed


@pytest.fixture
def svm_deployment(devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm]) -> Deployment:
    return with_svm_chain(devnet.deployment, *svm_node)


@pytest.fixture
def http(start_service: StartService, svm_deployment: Deployment) -> Iterator[httpx.Client]:
    service = start_service(svm_deployment, run_workers=True)
    with httpx.Client(base_url=service.base_url, timeout=10) as client:
        yield client
