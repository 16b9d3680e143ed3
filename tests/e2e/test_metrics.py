"""GET /metrics after one bridge on the devnet: every series an operator's dashboard reads is
there, with the labels it groups by and counts where something happened. No timing is
asserted: only that each measured thing was measured."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from crossfill.domain.status import RequestStatus
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    ORIGIN,
    bridge_request,
    funded_user,
    rpc_urls,
)
from tests.e2e.receiver import Receiver
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for

OPERATOR = {"Authorization": "Bearer operator-token"}
ROUTE = {"origin_chain_id": str(ORIGIN), "destination_chain_id": str(DESTINATION)}
BRIDGED = ["waiting", "pending", "submitted", "success"]


def _scrape(service: ServiceThread, **headers: str) -> list[Sample]:
    answer = httpx.get(f"{service.base_url}/metrics", headers=headers, timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    families = text_string_to_metric_families(answer.text)
    return [sample for family in families for sample in family.samples]


def _value(samples: list[Sample], name: str, **labels: str) -> float | None:
    """The sum of the samples `name` whose labels include `labels`; None when there is none."""
    found = [s.value for s in samples if s.name == name and labels.items() <= s.labels.items()]
    return sum(found) if found else None


@pytest.fixture
def receivers() -> Iterator[list[Receiver]]:
    made: list[Receiver] = []
    yield made
    for receiver in made:
        receiver.stop()


def _keyed_webhook(service: ServiceThread, receivers: list[Receiver]) -> tuple[str, Receiver]:
    """An API key whose webhook receiver refuses each event's first attempt (a failure to
    count), through the admin API."""
    admin = httpx.Client(base_url=service.base_url, headers=OPERATOR, timeout=10)
    with admin:
        key = admin.post("/admin/api-keys", json={"name": "metrics"}).json()["key"]
        receiver = Receiver(key, fail_first=1)
        receivers.append(receiver)
        webhook = admin.put("/admin/webhooks", json={"apiKey": key, "url": receiver.url})
        assert webhook.status_code == 200, webhook.text
    return key, receiver


def _bridge(service: ServiceThread, devnet: RunningDevnet, key: str) -> str:
    """A user of the key's app bridges to success; the request's id."""
    user = funded_user(devnet)
    with UserClient(service.base_url, rpc_urls(devnet), api_key=key) as user_client:
        quote = user_client.quote(bridge_request(user.address))
        succeeded(user_client.execute(quote, evm_wallet(user)))
    return quote.request_id


def test_every_series_appears_after_one_bridge(
    start_service: StartService, devnet: RunningDevnet, receivers: list[Receiver]
) -> None:
    service = start_service(
        run_workers=True,
        settings={"admin_token": "operator-token", "webhook_backoff_base_seconds": 0.1},
    )
    key, receiver = _keyed_webhook(service, receivers)
    request_id = _bridge(service, devnet, key)

    def delivered() -> list[Any]:
        return [d.body["data"]["status"] for d in receiver.accepted(request_id)]

    assert wait_for(lambda: delivered() == BRIDGED, timeout=30), delivered()
    samples = _scrape(service)

    bridged = {"route_kind": "bridge", "outcome": "ok"}
    assert _value(samples, "crossfill_quote_duration_seconds_count", **bridged) == 1
    assert _value(samples, "crossfill_quote_duration_seconds_bucket", le="+Inf", **bridged) == 1
    assert {s.labels["status"] for s in samples if s.name == "crossfill_requests"} == {
        str(status) for status in RequestStatus
    }
    assert _value(samples, "crossfill_requests", status="success") == 1
    answers = "crossfill_http_responses_total"
    print([(s.labels, s.value) for s in samples if s.name == answers])
    assert _value(samples, answers, route="/quote/v2", code="200") == 1
    assert (_value(samples, answers, route="/intents/status/v3", code="200") or 0) >= 1
    assert _value(samples, "crossfill_requests", status="pending") == 0
    assert _value(samples, "crossfill_fill_service_seconds_count", **ROUTE) == 1
    assert _value(samples, "crossfill_fill_end_to_end_seconds_count", **ROUTE) == 1

    for chain in evm_chains(devnet.deployment):
        chain_id = str(chain.id)
        assert (
            _value(samples, "crossfill_rpc_calls_total", chain_id=chain_id, outcome="ok") or 0
        ) > 0
        assert _value(samples, "crossfill_rpc_calls_total", chain_id=chain_id, call="log_scan")
        for currency in chain.currencies:
            balance = _value(
                samples, "crossfill_solver_balance", chain_id=chain_id, currency=currency.symbol
            )
            assert balance is not None and balance >= 0, (chain_id, currency.symbol)
        native = chain.native_currency.symbol
        assert (
            _value(samples, "crossfill_solver_balance", chain_id=chain_id, currency=native) or 0
        ) > 0
        lag = _value(samples, "crossfill_indexer_lag_blocks", chain_id=chain_id)
        assert lag is not None and lag >= 0
    sent = _value(
        samples,
        "crossfill_rpc_calls_total",
        chain_id=str(DESTINATION),
        call="eth_sendRawTransaction",
    )
    assert sent is not None and sent >= 1
    assert {s.labels["outcome"] for s in samples if s.name == "crossfill_rpc_calls_total"} <= {
        "ok",
        "reverted",
        "unreachable",
        "rate_limited",
        "node_behind",
        "error",
    }

    # Each of the four events was refused once, then delivered.
    webhook = "crossfill_webhook_delivery_duration_seconds_count"
    assert (_value(samples, webhook, outcome="delivered") or 0) >= len(BRIDGED)
    assert (_value(samples, webhook, outcome="failed") or 0) >= len(BRIDGED)
    failures = "crossfill_webhook_delivery_failures_total"
    assert (_value(samples, failures, reason="http_status") or 0) >= len(BRIDGED)
    assert _value(samples, "crossfill_webhook_deliveries_abandoned_total") == 0


def test_a_metrics_token_guards_the_scrape(start_service: StartService) -> None:
    service = start_service(settings={"metrics_token": "scrape-token"})
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "scrape-token"}):
        refused = httpx.get(f"{service.base_url}/metrics", headers=headers, timeout=10)
        assert refused.status_code == 401
        assert refused.json()["statusCode"] == 401 and "metrics token" in refused.json()["message"]
    samples = _scrape(service, Authorization="Bearer scrape-token")
    assert _value(samples, "crossfill_requests", status="waiting") == 0


def test_every_answer_is_counted_by_route_and_code(start_service: StartService) -> None:
    """By the route's template, never the path sent: random paths are one series."""
    service = start_service()
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        assert http.post("/quote/v2", json={"user": "nobody"}).status_code == 400
        assert http.get("/requests/v3").status_code == 401
        assert http.delete("/admin/api-keys/7").status_code == 403  # no operator token set
        assert http.get("/chains").status_code == 200
        unknown = {"requestId": "0x" + "00" * 32}
        assert http.get("/intents/status/v3", params=unknown).status_code == 404
        for attempt in range(3):
            assert http.get(f"/no-such-path-{attempt}").status_code == 404
    samples = _scrape(service)
    answers = "crossfill_http_responses_total"
    assert _value(samples, answers, route="/quote/v2", code="400") == 1
    assert _value(samples, answers, route="/requests/v3", code="401") == 1
    assert _value(samples, answers, route="/admin/api-keys/{key_id}", code="403") == 1
    assert _value(samples, answers, route="/chains", code="200") == 1
    assert _value(samples, answers, route="/intents/status/v3", code="404") == 1
    assert _value(samples, answers, route="unmatched", code="404") == 3
    assert not [s for s in samples if s.name == answers and "no-such" in s.labels["route"]]
