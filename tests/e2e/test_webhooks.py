"""Signed webhook deliveries to a real HTTP receiver: order, retries, failure and replay."""

from __future__ import annotations

import itertools
import subprocess
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from web3 import Web3

from crossfill.contracts import calldata
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    ORIGIN,
    bridge_request,
    final_status,
    funded_user,
    request_quote,
    rpc_urls,
)
from tests.e2e.conftest import validate_against
from tests.e2e.receiver import Receiver
from tests.e2e.user_client import SENT_ONLY, UserClient, evm_wallet
from tests.support.service import ServiceThread, StartService, run_cli
from tests.support.waiting import wait_for
from tests.support.wallets.evm import send_item

BRIDGED = ["waiting", "pending", "submitted", "success"]

OPERATOR = {"Authorization": "Bearer operator-token"}


def _run_crossfill(service: ServiceThread, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, home=service.settings.home, log_level="WARNING")


def _crossfill(service: ServiceThread, *args: str) -> str:
    done = _run_crossfill(service, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _keyed_service(start_service: StartService, **settings: Any) -> tuple[ServiceThread, str]:
    service = start_service(
        run_workers=True, settings={"admin_token": "operator-token", **settings}
    )
    created = httpx.post(
        f"{service.base_url}/admin/api-keys", json={"name": "hooks"}, headers=OPERATOR, timeout=10
    )
    return service, created.json()["key"]


@pytest.fixture
def receivers() -> Iterator[list[Receiver]]:
    made: list[Receiver] = []
    yield made
    for receiver in made:
        receiver.stop()


def _native_quote(service: ServiceThread, key: str, user: Any) -> dict[str, Any]:
    body = bridge_request(user.address, referrer="hooks.example").wire()
    with httpx.Client(base_url=service.base_url, timeout=10, headers={"x-api-key": key}) as http:
        return request_quote(http, body)


def _bridge(service: ServiceThread, devnet: RunningDevnet, key: str) -> str:
    """A user of the key's app quotes a bridge and sends its deposit (the app follows it by
    its webhook); the request's id."""
    user = funded_user(devnet)
    with UserClient(service.base_url, rpc_urls(devnet), api_key=key) as user_client:
        quote = user_client.quote(bridge_request(user.address, referrer="hooks.example"))
        user_client.execute(quote, evm_wallet(user), options=SENT_ONLY)  # webhooks follow it
    return quote.request_id


def _statuses(receiver: Receiver, request_id: str) -> list[str]:
    return [d.body["data"]["status"] for d in receiver.accepted(request_id)]


def test_bridge_events_arrive_signed_and_in_order(start_service, devnet, receivers) -> None:
    service, key = _keyed_service(start_service)
    receiver = Receiver(key)
    receivers.append(receiver)
    _crossfill(service, "webhooks", "set", key, receiver.url, "--header", "X-Partner=acme")
    assert receiver.url in _crossfill(service, "webhooks", "show", key[:10])
    request_id = _bridge(service, devnet, key)
    expected = ["waiting", "pending", "submitted", "success"]
    assert wait_for(lambda: _statuses(receiver, request_id) == expected, timeout=30), _statuses(
        receiver, request_id
    )
    deliveries = receiver.accepted(request_id)
    assert all(d.authentic for d in receiver.deliveries)
    assert len({d.event_id for d in deliveries}) == 4
    for delivery in deliveries:
        validate_against("webhook", delivery.body)
        assert delivery.headers["X-Partner"] == "acme"
        data = delivery.body["data"]
        assert data["failReason"] == "N/A" and data["refundFailReason"] == "N/A"
        assert data["referrer"] == "hooks.example" and data["depositAddress"] is None
    assert deliveries[-1].body["data"]["txHashes"]


def test_underpaid_bridge_reports_failure_then_refund(start_service, devnet, receivers) -> None:
    service, key = _keyed_service(start_service)
    receiver = Receiver(key)
    receivers.append(receiver)
    _crossfill(service, "webhooks", "set", key, receiver.url)
    user = funded_user(devnet)
    quote = _native_quote(service, key, user)
    request_id = quote["steps"][0]["requestId"]
    paid = int(quote["details"]["currencyIn"]["amount"]) - 1000
    order_id = bytes.fromhex(quote["protocol"]["v2"]["orderId"][2:])
    data = calldata.deposit_native(user.address, order_id)
    depository = evm_chains(devnet.deployment)[0].contracts.depository

    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    send_item(
        web3,
        user,
        {"to": depository, "data": calldata.hex_data(data), "value": str(paid), "chainId": ORIGIN},
    )
    assert wait_for(lambda: _statuses(receiver, request_id)[-1:] == ["refund"], timeout=40)
    statuses = _statuses(receiver, request_id)
    assert statuses == ["waiting", "failure", "refund"], statuses
    last = receiver.accepted(request_id)[-1].body["data"]
    assert last["failReason"] == "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL"


def test_retries_back_off_then_deliver(start_service, devnet, receivers) -> None:
    service, key = _keyed_service(
        start_service, webhook_backoff_base_seconds=0.1, webhook_backoff_cap_seconds=5
    )
    receiver = Receiver(key, fail_first=3)
    receivers.append(receiver)
    _crossfill(service, "webhooks", "set", key, receiver.url)
    request_id = _bridge(service, devnet, key)
    assert wait_for(lambda: _statuses(receiver, request_id) == BRIDGED, timeout=40)
    by_event: dict[str, list[Any]] = {}
    for delivery in receiver.deliveries:
        by_event.setdefault(delivery.event_id, []).append(delivery)
    assert len(by_event) == 4
    for attempts in by_event.values():
        assert [d.answered for d in attempts] == [500, 500, 500, 200]
        gaps = [later.at - earlier.at for earlier, later in itertools.pairwise(attempts)]
        for retry, gap in enumerate(gaps, start=1):
            assert gap >= 0.1 * 2 ** (retry - 1) / 2 - 0.02, gaps  # at least half the backoff


def test_exhausted_deliveries_are_kept_failed_and_replayed(
    start_service, devnet, receivers
) -> None:
    service, key = _keyed_service(
        start_service,
        webhook_backoff_base_seconds=0.01,
        webhook_backoff_cap_seconds=0.05,
    )
    receiver = Receiver(key, always_fail=True)
    receivers.append(receiver)
    _crossfill(service, "webhooks", "set", key, receiver.url)
    request_id = _bridge(service, devnet, key)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        assert final_status(http, request_id)["status"] == "success"
    # Each of the 4 events: the first try and 10 retries, then the next event's turn.
    assert wait_for(lambda: len(receiver.deliveries) >= 44, timeout=30), len(receiver.deliveries)
    wait_for(lambda: False, timeout=0.5)  # no 12th attempt of anything comes
    tries_per_event: dict[str, int] = {}
    for delivery in receiver.deliveries:
        tries_per_event[delivery.event_id] = tries_per_event.get(delivery.event_id, 0) + 1
    assert sorted(tries_per_event.values()) == [11, 11, 11, 11]
    receiver.always_fail = False
    assert "4 failed deliveries queued again" in _crossfill(service, "webhooks", "replay", key[:10])
    assert wait_for(lambda: _statuses(receiver, request_id) == BRIDGED, timeout=10)


def test_admin_webhook_endpoints(start_service) -> None:
    service, key = _keyed_service(start_service)
    with httpx.Client(base_url=service.base_url, timeout=10, headers=OPERATOR) as http:
        key_id = http.get("/admin/api-keys").json()["apiKeys"][0]["id"]
        by_id = http.put("/admin/webhooks", json={"apiKey": str(key_id), "url": "http://x.test"})
        assert by_id.status_code == 400 and "API key itself" in by_id.json()["message"]
        bad_url = http.put("/admin/webhooks", json={"apiKey": key, "url": "ftp://x.test/h"})
        assert bad_url.status_code == 400
        reserved = http.put(
            "/admin/webhooks",
            json={"apiKey": key, "url": "http://x.test", "headers": {"X-Signature-SHA256": "1"}},
        )
        assert reserved.status_code == 400
        good = http.put(
            "/admin/webhooks",
            json={"apiKey": key, "url": "http://x.test/h", "headers": {"X-Partner": "acme"}},
        )
        assert good.status_code == 200, good.text
        shown = http.get(f"/admin/webhooks/{key_id}").json()
        assert shown["url"] == "http://x.test/h" and shown["headerNames"] == ["X-Partner"]
        assert key not in str(shown)
        assert http.post(f"/admin/webhooks/{key_id}/replay").json()["queued"] == 0
        assert http.delete(f"/admin/webhooks/{key_id}").status_code == 200
        assert http.delete(f"/admin/webhooks/{key_id}").status_code == 404
        assert http.get(f"/admin/webhooks/{key_id}").json()["url"] is None


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({"X-Partner": "acmé"}, "header 'X-Partner': the value may hold only visible ASCII"),
        ({"X-Partner": "a\r\nX-Evil: 1"}, "header 'X-Partner': the value may hold only"),
        ({"Transfer-Encoding": "chunked"}, "header 'Transfer-Encoding': hop-by-hop"),
        ({"X-Webhook-Id": "1"}, "header 'X-Webhook-Id': it is set by the service"),
        ({"X-A": "1", "x-a": "2"}, "header 'x-a': given twice"),
        ({"[x]": "1"}, "header '[x]': the name may hold only"),
    ],
)
def test_bad_custom_headers_are_refused_by_the_api_and_the_cli_alike(
    start_service, headers: dict[str, str], message: str
) -> None:
    service, key = _keyed_service(start_service)
    url = "http://hooks.test/h"
    with httpx.Client(base_url=service.base_url, timeout=10, headers=OPERATOR) as http:
        refused = http.put("/admin/webhooks", json={"apiKey": key, "url": url, "headers": headers})
        assert refused.status_code == 400
        body = refused.json()
        assert body["statusCode"] == 400 and body["message"].startswith(message), body
        key_id = http.get("/admin/api-keys").json()["apiKeys"][0]["id"]
        assert http.get(f"/admin/webhooks/{key_id}").json()["url"] is None
    options = [part for name, value in headers.items() for part in ("--header", f"{name}={value}")]
    done = _run_crossfill(service, "webhooks", "set", key, url, *options)
    assert done.returncode == 1
    # The same message, however the terminal wrapped it.
    assert f"error: {body['message']}".split() == done.stdout.split(), done.stdout


def test_a_slow_receiver_does_not_hold_up_others(start_service, devnet, receivers) -> None:
    service, slow_key = _keyed_service(start_service)
    fast_key = httpx.post(
        f"{service.base_url}/admin/api-keys", json={"name": "fast"}, headers=OPERATOR, timeout=10
    ).json()["key"]
    slow, fast = Receiver(slow_key, delay_seconds=4), Receiver(fast_key)
    receivers.extend([slow, fast])
    _crossfill(service, "webhooks", "set", slow_key, slow.url)
    _crossfill(service, "webhooks", "set", fast_key, fast.url)
    slow_request = _bridge(service, devnet, slow_key)
    fast_request = _bridge(service, devnet, fast_key)
    assert wait_for(lambda: _statuses(fast, fast_request) == BRIDGED, timeout=30)
    # Meanwhile the slow receiver has not yet taken all of its four events.
    assert len(slow.accepted(slow_request)) <= 3
    assert wait_for(lambda: _statuses(slow, slow_request) == BRIDGED, timeout=40)


def test_a_receiver_whose_answer_never_ends_is_delivered_to_and_let_go(
    start_service, devnet, receivers
) -> None:
    """The status is the answer: a receiver streaming an endless body after its 200 (a hostile
    integrator's endpoint) gets every event in order, and the service reads none of that body
    (reading it whole once filled the process's memory for as long as the receiver sent)."""
    service, key = _keyed_service(start_service)
    hostile = Receiver(key, endless_body=True)
    receivers.append(hostile)
    _crossfill(service, "webhooks", "set", key, hostile.url)
    request_id = _bridge(service, devnet, key)
    assert wait_for(lambda: _statuses(hostile, request_id) == BRIDGED, timeout=30)
    # Per delivery, what the kernel's buffers took before the sender hung up: not megabytes.
    assert hostile.body_bytes_sent < len(BRIDGED) * 8 * 2**20
