"""A request's status (`GET /intents/status/v3`) and what its statuses mean."""

from __future__ import annotations

from enum import StrEnum

from pydantic import JsonValue

from crossfill_client.models._base import WireModel


class RequestStatus(StrEnum):
    WAITING = "waiting"
    DEPOSITING = "depositing"
    PENDING = "pending"
    SUBMITTED = "submitted"
    SUCCESS = "success"
    FAILURE = "failure"
    REFUND = "refund"

    @property
    def is_final(self) -> bool:
        """Whether the request has ended (nothing moves it after this)."""
        return self in FINAL_STATUSES

    @property
    def is_failed(self) -> bool:
        """Ended without the fill: failed or refunded."""
        return self in (RequestStatus.FAILURE, RequestStatus.REFUND)


FINAL_STATUSES = frozenset({RequestStatus.SUCCESS, RequestStatus.FAILURE, RequestStatus.REFUND})


class StatusRecord(WireModel):
    """`updated_at` is Unix milliseconds. `fail_reason` and `refund_fail_reason` are the
    spec's enum values (`N/A` when there is none)."""

    status: RequestStatus
    in_tx_hashes: tuple[str, ...] = ()
    tx_hashes: tuple[str, ...] = ()
    updated_at: int
    origin_chain_id: int
    destination_chain_id: int
    details: JsonValue = None
    fail_reason: str | None = None
    refund_fail_reason: str | None = None
