"""/readyz is public and unlimited: a flood of probes is not a flood of calls to the nodes."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.faults.conftest import behind_proxy
from tests.faults.rpc_proxy import RpcFaultProxy
from tests.support.service import StartService


def test_a_flood_of_readiness_probes_checks_each_chain_about_once_a_second(
    start_service: StartService, devnet, destination_proxy: RpcFaultProxy
) -> None:
    service = start_service(behind_proxy(devnet, destination_proxy))
    before = destination_proxy.calls["eth_chainId"]

    def probe(_: int) -> int:
        return httpx.get(f"{service.base_url}/readyz", timeout=10).status_code

    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(probe, range(200)))
    seconds = time.monotonic() - started
    assert set(answers) == {200}
    # An identity check of the chain per second at most, however many probes came.
    checks = destination_proxy.calls["eth_chainId"] - before
    assert checks <= seconds + 1, (checks, seconds)
