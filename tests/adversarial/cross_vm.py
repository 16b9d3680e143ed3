"""The service on a deployment with every kind of chain: the session's EVM devnet, an SVM node
and the perps exchange (each started per module, as their e2e suites start them), rate limits
off so that every answer is the quote's own."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from crossfill.config import Deployment
from crossfill.devnet.exchange.process import ExchangeProcess
from crossfill.devnet.svm.deployment import svm_chain_document
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from crossfill.kinds.perps.config import PERPS_SECTION
from crossfill.kinds.svm.config import SVM_SECTION, SvmChainConfig
from tests.conftest import RunningDevnet
from tests.e2e.bridging import request_quote
from tests.e2e.perps.conftest import exchange, perps_config
from tests.e2e.svm.conftest import svm_node
from tests.support.service import ServiceThread, StartService

__all__ = ["cross_vm", "cross_vm_deployment", "cross_vm_service", "exchange", "svm_node"]

SVM_ID = 792703809
PERPS_ID = 1337
SOL = "1" * 32
PERPS_USDC = "0x" + "0" * 32


@pytest.fixture
def cross_vm_deployment(
    devnet: RunningDevnet,
    svm_node: tuple[SvmNodeProcess, SeededSvm],
    exchange: ExchangeProcess,
) -> Deployment:
    """The session's EVM devnet with the module's SVM node and exchange."""
    node, seeded = svm_node
    svm = svm_chain_document(rpc_url=node.rpc_url, ws_url=node.ws_url, seeded=seeded)
    return devnet.deployment.with_section(
        SVM_SECTION, (SvmChainConfig.model_validate(svm),)
    ).with_section(PERPS_SECTION, (perps_config(exchange),))


@pytest.fixture
def cross_vm_service(cross_vm_deployment: Deployment, start_service: StartService) -> ServiceThread:
    return start_service(
        cross_vm_deployment,
        settings={"rate_limit_anonymous_per_minute": 0, "rate_limit_key_per_minute": 0},
    )


@pytest.fixture
def cross_vm(cross_vm_service: ServiceThread) -> Iterator[httpx.Client]:
    """A client of the service; one connection, kept open across requests."""
    with httpx.Client(base_url=cross_vm_service.base_url, timeout=20) as client:
        yield client


def quoted(client: httpx.Client, body: dict[str, object]) -> dict[str, object]:
    """A quote the service answers 200 once its chain state is in (503 until then)."""
    return request_quote(client, dict(body))
