"""The SVM chain beside the session's EVM devnet: a node per module, and the service with
workers on a deployment that includes it (users' clients send to its node too)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from crossfill.config import Deployment
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from crossfill.kinds.svm.config import SVM_CHAIN_ID
from tests.conftest import RunningDevnet
from tests.e2e.bridging import rpc_urls
from tests.support.devnets import running_svm_node, with_svm_chain
from tests.support.service import ServiceThread, StartService


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
def service(start_service: StartService, svm_deployment: Deployment) -> ServiceThread:
    return start_service(svm_deployment, run_workers=True)


@pytest.fixture
def http(service: ServiceThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=10) as client:
        yield client


@pytest.fixture
def chain_urls(devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm]) -> dict[int, str]:
    node, _seeded = svm_node
    return {**rpc_urls(devnet), SVM_CHAIN_ID: node.rpc_url}
