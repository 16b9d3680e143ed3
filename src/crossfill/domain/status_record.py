"""The status record (GET /intents/status/v3) and webhook data, from a request's facts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crossfill.domain.status import RequestStatus

NOT_APPLICABLE = "N/A"
UNKNOWN = "UNKNOWN"
_REASON_STATUSES = frozenset({RequestStatus.FAILURE, RequestStatus.REFUND})


@dataclass(frozen=True)
class RequestFacts:
    request_id: str
    status: RequestStatus
    origin_chain_id: int
    destination_chain_id: int
    in_tx_hashes: Sequence[str]
    out_tx_hashes: Sequence[str]
    updated_at_ms: int
    created_at_ms: int
    fail_reason: str | None
    refund_fail_reason: str | None
    # What a failure was, beyond its reason (`domain.gasless.FailureDetails`); None otherwise.
    details: Mapping[str, Any] | None = None


def fail_reason(facts: RequestFacts) -> str:
    """`N/A` unless failed or refunded; then the recorded reason, or UNKNOWN."""
    if facts.status not in _REASON_STATUSES:
        return NOT_APPLICABLE
    return facts.fail_reason or UNKNOWN


def status_record(facts: RequestFacts) -> dict[str, Any]:
    return {
        "status": str(facts.status),
        "details": None if facts.details is None else dict(facts.details),
        "inTxHashes": list(facts.in_tx_hashes),
        "txHashes": list(facts.out_tx_hashes),
        "updatedAt": facts.updated_at_ms,
        "originChainId": facts.origin_chain_id,
        "destinationChainId": facts.destination_chain_id,
        "quoteCreatedAt": facts.created_at_ms,
        "failReason": fail_reason(facts),
        "refundFailReason": facts.refund_fail_reason or NOT_APPLICABLE,
    }
