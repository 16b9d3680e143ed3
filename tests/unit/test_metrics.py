"""The series' pure parts: RPC outcomes named from the typed failures, the store's request
counts exported as one gauge family, an exposition that parses, and a dashboard and docs that
name exactly the series there are."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from crossfill.contracts.reverts import RevertReason
from crossfill.errors import ChainError, ChainUnreachable, NodeBehind, RateLimited, Reverted
from crossfill.kinds.evm.client import rpc_outcome
from crossfill.metrics import Metrics


@pytest.mark.parametrize(
    ("failure", "outcome"),
    [
        (Reverted("r", data=b"", reason=RevertReason("AlreadyFilled", ())), "reverted"),
        (RateLimited("429", retry_after_seconds=None), "rate_limited"),
        (ChainUnreachable("timeout"), "unreachable"),
        (NodeBehind("behind", block_number=7), "node_behind"),
        (ChainError("nonsense"), "error"),
    ],
)
def test_each_typed_rpc_failure_is_its_own_outcome(failure: ChainError, outcome: str) -> None:
    assert rpc_outcome(failure) == outcome


def _families(exposition: bytes) -> dict[str, list[tuple[dict[str, str], float]]]:
    return {
        family.name: [(sample.labels, sample.value) for sample in family.samples]
        for family in text_string_to_metric_families(exposition.decode())
    }


def test_request_counts_are_one_gauge_family_labelled_by_status() -> None:
    families = _families(Metrics().exposition({"success": 3, "waiting": 0}))
    assert sorted(families["crossfill_requests"], key=lambda s: s[0]["status"]) == [
        ({"status": "success"}, 3.0),
        ({"status": "waiting"}, 0.0),
    ]


def test_kept_deposits_are_one_gauge_family_by_chain_and_reason() -> None:
    kept = {(1, "AMOUNT_TOO_LOW_TO_REFUND"): 12, (2, "UNSERVED_CURRENCY"): 1}
    families = _families(Metrics().exposition({}, kept))
    assert families["crossfill_deposits_kept"] == [
        ({"chain_id": "1", "reason": "AMOUNT_TOO_LOW_TO_REFUND"}, 12.0),
        ({"chain_id": "2", "reason": "UNSERVED_CURRENCY"}, 1.0),
    ]


def test_without_request_counts_the_other_series_still_expose() -> None:
    metrics = Metrics()
    metrics.indexer_lag.labels(1).set(2)
    families = _families(metrics.exposition(None))
    assert "crossfill_requests" not in families
    assert families["crossfill_indexer_lag_blocks"] == [({"chain_id": "1"}, 2.0)]


def test_two_services_in_one_process_share_no_series() -> None:
    first, second = Metrics(), Metrics()
    first.webhook_abandoned.inc()
    assert first.registry.get_sample_value("crossfill_webhook_deliveries_abandoned_total") == 1
    assert second.registry.get_sample_value("crossfill_webhook_deliveries_abandoned_total") == 0


def _exported_names() -> set[str]:
    """Every series name as scraped (counters with `_total`), the store's gauge included."""
    names = {"crossfill_requests"}
    for family in Metrics().registry.collect():
        names.add(family.name + "_total" if family.type == "counter" else family.name)
    return names


def test_the_dashboard_and_the_docs_name_every_series_and_no_other() -> None:
    docs = Path(__file__).parents[2] / "docs"
    dashboard = (docs / "grafana-dashboard.json").read_text()
    expressions = " ".join(
        target["expr"]
        for panel in json.loads(dashboard)["panels"]
        for target in panel.get("targets", [])
    )
    named = {
        re.sub(r"_(bucket|count|sum)$", "", name)
        for name in re.findall(r"crossfill_\w+", expressions)
    }
    assert named == _exported_names()
    described = set(re.findall(r"`(crossfill_\w+)", (docs / "metrics.md").read_text()))
    assert _exported_names() <= described
