"""kill -9 the service while webhook deliveries are being retried: nothing lost, none reordered."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    funded_user,
    native_bridge,
    request_quote,
    rpc_urls,
)
from tests.e2e.receiver import Receiver
from tests.support.service import ServiceProcess, service_settings
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps

BRIDGED = ["waiting", "pending", "submitted", "success"]
BRIDGES = 6


@pytest.fixture
def service(tmp_path: Path, devnet: RunningDevnet) -> Iterator[ServiceProcess]:
    settings = service_settings(
        tmp_path,
        devnet.deployment_path,
        admin_token="operator-token",
        webhook_backoff_base_seconds=0.3,
        webhook_backoff_cap_seconds=1,
    )
    process = ServiceProcess(settings)
    process.start()
    yield process
    process.stop()


def _delivered_in_order(receiver: Receiver, request_ids: list[str]) -> bool:
    for request_id in request_ids:
        statuses = [d.body["data"]["status"] for d in receiver.accepted(request_id)]
        # At least once: a delivery cut off by the kill may come again, never out of order.
        if [status for status, _ in itertools.groupby(statuses)] != BRIDGED:
            return False
    return True


def test_deliveries_survive_kill_9_mid_retry(service: ServiceProcess, devnet) -> None:
    key = httpx.post(
        f"{service.base_url}/admin/api-keys",
        json={"name": "crash"},
        headers={"Authorization": "Bearer operator-token"},
        timeout=10,
    ).json()["key"]
    receiver = Receiver(key, fail_first=2)
    try:
        service.cli("webhooks", "set", key, receiver.url).check_returncode()
        request_ids = []
        with httpx.Client(
            base_url=service.base_url, timeout=10, headers={"x-api-key": key}
        ) as http:
            for _ in range(BRIDGES):
                user = funded_user(devnet)
                quote = request_quote(
                    http,
                    native_bridge(user.address),
                )
                execute_steps(quote, user, rpc_urls(devnet))
                request_ids.append(quote["steps"][0]["requestId"])
        for _ in range(2):  # kill while retries are pending, twice
            assert wait_for(lambda: any(d.answered == 500 for d in receiver.deliveries), timeout=20)
            time.sleep(0.4)
            service.kill()
            service.start()
        assert wait_for(lambda: _delivered_in_order(receiver, request_ids), timeout=90)
        assert all(d.authentic for d in receiver.deliveries)
    finally:
        receiver.stop()
