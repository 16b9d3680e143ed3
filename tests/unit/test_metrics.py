"""The series' pure parts: RPC outcomes named from the typed failures, the store's request
counts exported as one gauge family, and an exposition that parses."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from crossfill.chains.evm import rpc_outcome
from crossfill.contracts.reverts import RevertReason
from crossfill.errors import ChainError, ChainUnreachable, NodeBehind, RateLimited, Reverted
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
