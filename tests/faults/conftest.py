"""Fault fixtures: an RPC fault proxy in front of the destination chain."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crossfill.config import Deployment
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.conftest import start_service
from tests.faults.rpc_proxy import RpcFaultProxy

# The e2e suite's service fixture, used here as well.
__all__ = ["start_service"]


def _proxy(devnet: RunningDevnet, chain_index: int) -> Iterator[RpcFaultProxy]:
    proxy = RpcFaultProxy(evm_chains(devnet.deployment)[chain_index].rpc_url).start()
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture
def origin_proxy(devnet: RunningDevnet) -> Iterator[RpcFaultProxy]:
    yield from _proxy(devnet, 0)


@pytest.fixture
def destination_proxy(devnet: RunningDevnet) -> Iterator[RpcFaultProxy]:
    yield from _proxy(devnet, 1)


def behind_proxy(devnet: RunningDevnet, *proxies: RpcFaultProxy) -> Deployment:
    """The devnet's deployment with each proxied chain's RPC going through its proxy."""
    proxy_of = {proxy.upstream: proxy.url for proxy in proxies}
    chains = tuple(
        chain.model_copy(update={"internal_rpc_url": proxy_of[chain.rpc_url]})
        if chain.rpc_url in proxy_of
        else chain
        for chain in evm_chains(devnet.deployment)
    )
    return devnet.deployment.model_copy(update={"chains": chains})
