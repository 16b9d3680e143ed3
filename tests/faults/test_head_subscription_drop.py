"""The origin's head subscription is cut mid-run (every websocket connection dropped, new
ones refused): deposits are still found and filled by polling, and once the websocket is back
the follower subscribes again and fills go on."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from crossfill.config import Deployment
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.bridging import final_status, funded_user, native_bridge, request_quote
from tests.e2e.bridging import rpc_urls as devnet_rpc_urls
from tests.support.service import StartService
from tests.support.tcp_relay import TcpRelay
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps


@pytest.fixture
def origin_relay(devnet: RunningDevnet) -> Iterator[TcpRelay]:
    port = urlsplit(evm_chains(devnet.deployment)[0].rpc_url).port
    assert port is not None
    relay = TcpRelay(port).start()
    try:
        yield relay
    finally:
        relay.stop()


def _subscribing_through(devnet: RunningDevnet, relay: TcpRelay) -> Deployment:
    origin, *others = evm_chains(devnet.deployment)
    origin = origin.model_copy(update={"internal_ws_rpc_url": relay.url})
    return devnet.deployment.model_copy(update={"chains": (origin, *others)})


def _bridge(http: httpx.Client, devnet: RunningDevnet) -> str:
    user = funded_user(devnet)
    quote = request_quote(http, native_bridge(user.address))
    execute_steps(quote, user, devnet_rpc_urls(devnet))
    return str(final_status(http, quote["steps"][0]["requestId"])["status"])


def test_fills_go_on_through_a_dropped_head_subscription(
    start_service: StartService, devnet: RunningDevnet, origin_relay: TcpRelay
) -> None:
    service = start_service(_subscribing_through(devnet, origin_relay), run_workers=True)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        assert wait_for(lambda: origin_relay.accepted >= 1, timeout=10)
        assert _bridge(http, devnet) == "success"
        origin_relay.drop()
        assert _bridge(http, devnet) == "success"  # by polling
        subscribed_before = origin_relay.accepted
        origin_relay.restore()
        assert wait_for(lambda: origin_relay.accepted > subscribed_before, timeout=30)
        assert _bridge(http, devnet) == "success"
