"""Every status an operation serves is one /openapi.json lists for it.

Each operation the document lists (a new route is probed without touching this file) is sent
what any client can send: a wrong API key, a wrong bearer token, malformed and well-formed
unknown path values, an empty and a broken body, and the same again once the caller's rate
limit and its wrong-secret budget are spent. Every answer's status must be documented for that
operation. Then the service's own count of what it answered (`crossfill_http_responses_total`,
by route and code) is checked against the document too, so an answer some other probe caused
cannot slip by either.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.bridging import OPERATOR_TOKEN
from tests.support.service import ServiceThread, StartService

METRICS_TOKEN = "metrics-token"
METHODS = ("get", "post", "put", "delete", "patch")
# Statuses no client request chooses: what any route may meet (the size limits, an internal
# failure) is documented everywhere by `api.openapi.ALWAYS`; a 405 is no operation's.
NOT_PROBED = frozenset({405})


@dataclass(frozen=True)
class Operation:
    method: str
    template: str  # the documented path, `/requests/{requestId}/signature`
    documented: frozenset[int]
    has_body: bool

    def path(self, value_of: dict[str, str] | None = None) -> str:
        """The template with each `{name}` filled: a well-formed unknown value by default."""

        def filled(match: re.Match[str]) -> str:
            name = match.group(1)
            return (value_of or {}).get(name) or _well_formed(name)

        return re.sub(r"\{([^}]+)\}", filled, self.template)


def _well_formed(name: str) -> str:
    """A value of the right form that names nothing (the names the document uses)."""
    lowered = name.lower()
    if lowered.endswith(("requestid", "claimid")):
        return "0x" + "ee" * 32
    if lowered in ("wallet", "address"):
        return "0x" + "ee" * 20
    return "999999"


def _operations(document: dict[str, Any]) -> list[Operation]:
    found = []
    for template, operations in document["paths"].items():
        for method, operation in operations.items():
            if method not in METHODS:
                continue
            documented = frozenset(int(status) for status in operation["responses"])
            found.append(Operation(method, template, documented, "requestBody" in operation))
    return found


def _probes(operation: Operation) -> Iterator[tuple[str, dict[str, Any]]]:
    """What any client may send this operation: (path, request options)."""
    path = operation.path()
    body: dict[str, Any] = {"json": {}} if operation.has_body else {}
    yield path, body
    yield path, {**body, "headers": {"x-api-key": "not-a-key"}}
    yield path, {**body, "headers": {"Authorization": "Bearer not-the-token"}}
    yield path, {"content": b"{not json", "headers": {"content-type": "application/json"}}
    malformed = dict.fromkeys(re.findall(r"\{([^}]+)\}", operation.template), "x")
    if malformed:
        yield operation.path(malformed), body


def _answers(service: ServiceThread, rounds: int = 1) -> list[tuple[Operation, int, str]]:
    """Every probe of every documented operation, `rounds` times: (operation, status, body)."""
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        document = http.get("/openapi.json").json()
        answers = []
        for _ in range(rounds):
            for operation in _operations(document):
                for path, options in _probes(operation):
                    answer = http.request(operation.method, path, **options)
                    answers.append((operation, answer.status_code, answer.text[:200]))
    return answers


def _served(service: ServiceThread) -> dict[str, set[int]]:
    """The service's own count of its answers: route template → the statuses it answered."""
    # From an address of its own: the probes' spent budgets are their address's.
    transport = httpx.HTTPTransport(local_address="127.0.0.4")
    with httpx.Client(base_url=service.base_url, transport=transport, timeout=10) as scraper:
        scrape = scraper.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert scrape.status_code == 200, scrape.text
    served: dict[str, set[int]] = {}
    for family in text_string_to_metric_families(scrape.text):
        for sample in family.samples:
            if sample.name == "crossfill_http_responses_total" and sample.value > 0:
                served.setdefault(sample.labels["route"], set()).add(int(sample.labels["code"]))
    return served


def _undocumented(
    service: ServiceThread, answers: list[tuple[Operation, int, str]]
) -> dict[tuple[str, ...], str]:
    """(method, operation, status) → an answer's body, for each status served undocumented;
    (route, status) for those only the service's count shows."""
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        document = http.get("/openapi.json").json()
    missing: dict[tuple[str, ...], str] = {
        (operation.method, operation.template, str(status)): text
        for operation, status, text in answers
        if status not in operation.documented and status not in NOT_PROBED
    }
    # By route (the count has no method): a status served must be one of the path's.
    for route, statuses in _served(service).items():
        operations = document["paths"].get(route)
        if operations is None:
            continue  # not an operation of the document (unmatched paths, /openapi.json)
        documented = {int(status) for op in operations.values() for status in op["responses"]}
        for status in statuses - documented - NOT_PROBED:
            missing[(route, str(status))] = "counted by the service"
    return missing


@pytest.fixture
def strict_service(start_service: StartService) -> ServiceThread:
    """A service whose every guarded operation can be refused: an operator token, a metrics
    token, and budgets of one request and one wrong secret per minute."""
    return start_service(
        settings={
            "admin_token": OPERATOR_TOKEN,
            "metrics_token": METRICS_TOKEN,
            "rate_limit_anonymous_per_minute": 1,
            "rate_limit_key_per_minute": 1,
            "rate_limit_bad_key_per_minute": 1,
        }
    )


def test_every_status_served_to_any_client_is_documented(start_service: StartService) -> None:
    service = start_service(
        settings={
            "admin_token": OPERATOR_TOKEN,
            "metrics_token": METRICS_TOKEN,
            # Every wrong secret answered as such (401), none refused for the ones before.
            "rate_limit_bad_key_per_minute": 0,
        }
    )
    answers = _answers(service)
    assert _undocumented(service, answers) == {}
    # The probes reach the statuses they are for: a wrong key, a malformed value; and the
    # service's count names routes as the document does.
    assert {status for _, status, _ in answers} >= {400, 401, 404}
    assert set(_served(service)) >= {
        "/quote/v2",
        "/admin/api-keys",
        "/requests/{requestId}/signature",
    }


def test_every_status_served_once_budgets_are_spent_is_documented(
    strict_service: ServiceThread,
) -> None:
    answers = _answers(strict_service, rounds=2)
    assert _undocumented(strict_service, answers) == {}
    refused = {operation.template for operation, status, _ in answers if status == 429}
    assert "/admin/api-keys" in refused
    assert "/quote/v2" in refused
