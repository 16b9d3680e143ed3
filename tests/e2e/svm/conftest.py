"""The SVM chain beside the session's EVM devnet: a node per module, and the service with
workers on a deployment that includes it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from crossfill.config import Deployment
from crossfill.devnet.svm.deployment import svm_chain_document
from crossfill.devnet.svm.process import SvmNodeOptions, SvmNodeProcess, start_svm_node
from crossfill.devnet.svm.seed import SeededSvm, seed_svm
from crossfill.kinds.svm.config import SVM_SECTION, SvmChainConfig
from tests.conftest import RunningDevnet
from tests.support.service import StartService


@pytest.fixture(scope="module")
def svm_node(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[SvmNodeProcess, SeededSvm]]:
    node = start_svm_node(
        log_dir=tmp_path_factory.mktemp("svm"), options=SvmNodeOptions(slot_ms=100)
    )
    try:
        yield node, seed_svm(node.rpc_url)
    finally:
        node.stop()


@pytest.fixture
def svm_deployment(devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm]) -> Deployment:
    node, seeded = svm_node
    document = svm_chain_document(rpc_url=node.rpc_url, ws_url=node.ws_url, seeded=seeded)
    return devnet.deployment.with_section(SVM_SECTION, (SvmChainConfig.model_validate(document),))


@pytest.fixture
def http(start_service: StartService, svm_deployment: Deployment) -> Iterator[httpx.Client]:
    service = start_service(svm_deployment, run_workers=True)
    with httpx.Client(base_url=service.base_url, timeout=10) as client:
        yield client
