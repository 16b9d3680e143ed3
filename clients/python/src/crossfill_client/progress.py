"""What `execute` reports as it goes, one typed event per thing that happened."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from crossfill_client.models.status import StatusRecord


@dataclass(frozen=True)
class StepStarted:
    step_id: str
    kind: str
    index: int
    total: int


@dataclass(frozen=True)
class TransactionSubmitted:
    """Broadcast; `tx_id` is the transaction's hash (EVM) or signature (SVM)."""

    step_id: str
    chain_id: int
    tx_id: str


@dataclass(frozen=True)
class TransactionConfirmed:
    step_id: str
    chain_id: int
    tx_id: str


@dataclass(frozen=True)
class SignaturePosted:
    step_id: str
    endpoint: str


@dataclass(frozen=True)
class ExchangeActionPosted:
    step_id: str
    nonce: int


@dataclass(frozen=True)
class StatusChanged:
    """The request's status, each time it changes while a step's check is followed."""

    step_id: str
    record: StatusRecord


@dataclass(frozen=True)
class StepCompleted:
    step_id: str


ProgressEvent = (
    StepStarted
    | TransactionSubmitted
    | TransactionConfirmed
    | SignaturePosted
    | ExchangeActionPosted
    | StatusChanged
    | StepCompleted
)
ProgressCallback = Callable[[ProgressEvent], None]
