"""Fault fixtures: an RPC fault proxy in front of the destination chain."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crossfill.config import Deployment
from tests.conftest import RunningDevnet
from tests.faults.rpc_proxy import RpcFaultProxy

pytest_plugins = ["tests.e2e.conftest"]


@pytest.fixture
def destination_proxy(devnet: RunningDevnet) -> Iterator[RpcFaultProxy]:
    proxy = RpcFaultProxy(devnet.deployment.chains[1].rpc_url).start()
    try:
        yield proxy
    finally:
        proxy.stop()


def behind_proxy(devnet: RunningDevnet, proxy: RpcFaultProxy) -> Deployment:
    """The devnet's deployment with the destination chain's RPC going through `proxy`."""
    origin, destination = devnet.deployment.chains
    proxied = destination.model_copy(update={"internal_rpc_url": proxy.url})
    return devnet.deployment.model_copy(update={"chains": (origin, proxied)})
