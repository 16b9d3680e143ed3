"""A request's timeline as an operator reads it (pure): quoted, deposit seen, deposit confirmed,
fill sent, fill mined (or failed), refund sent and mined, each with its time, the time since
the step before, and its transaction.

Times are the service's own where it recorded them: a transaction's first record (a deposit
seen, a fill or refund sent) and the status changes it published (a deposit confirmed, a fill
or refund mined). A request without published changes (stored before they were kept, or
written in bulk) falls back to the block times of its mined transactions.

`crossfill requests show` and the explorer's request page both read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from crossfill.domain.record_facts import RecordFacts, TxFacts
from crossfill.domain.status import AWAITING_DEPOSIT

MINED = ("success", "failure")


@dataclass(frozen=True)
class StatusChange:
    """A status the request moved to, and when (a published status event)."""

    status: str
    at: datetime


@dataclass(frozen=True)
class Step:
    """One step: what happened, when (None: not known), the time since the step before with a
    known time, and its transaction if it had one."""

    name: str
    at: datetime | None
    since_previous: timedelta | None = None
    chain_id: int | None = None
    tx_hash: str | None = None
    block: int | None = None


def _parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _block_time(tx: TxFacts) -> datetime | None:
    return datetime.fromtimestamp(tx.timestamp, UTC) if tx.timestamp else None


def _tx_step(name: str, tx: TxFacts, at: datetime | None) -> Step:
    return Step(name, at, chain_id=tx.chain_id, tx_hash=tx.tx_hash, block=tx.block_number)


@dataclass(frozen=True)
class _Changes:
    changes: Sequence[StatusChange]

    def first(self, status: str, *, since: datetime | None = None) -> datetime | None:
        """When the request first moved to `status` (at or after `since`)."""
        return next(
            (
                change.at
                for change in self.changes
                if change.status == status and (since is None or change.at >= since)
            ),
            None,
        )

    def left_waiting(self, since: datetime | None) -> datetime | None:
        """When a deposit was judged: the first move out of waiting for a deposit."""
        return next(
            (
                change.at
                for change in self.changes
                if change.status not in AWAITING_DEPOSIT and (since is None or change.at >= since)
            ),
            None,
        )


def _deposit_steps(deposit: TxFacts, changes: _Changes) -> list[Step]:
    seen_at = deposit.recorded_at or _block_time(deposit)
    steps = [_tx_step("deposit seen", deposit, seen_at)]
    if deposit.status == "failure":
        steps.append(_tx_step("deposit failed", deposit, _block_time(deposit)))
    elif deposit.status == "success":
        confirmed_at = changes.left_waiting(seen_at) or _block_time(deposit)
        steps.append(_tx_step("deposit confirmed", deposit, confirmed_at))
    return steps


def _out_steps(kind: str, tx: TxFacts, changes: _Changes, ended_as: str) -> list[Step]:
    """A fill or refund: sent, then mined (or failed) once it was."""
    steps = [_tx_step(f"{kind} sent", tx, tx.recorded_at)]
    if tx.status == "success":
        mined_at = changes.first(ended_as, since=tx.recorded_at) or _block_time(tx)
        steps.append(_tx_step(f"{kind} mined", tx, mined_at))
    elif tx.status == "failure":
        failed_at = changes.first("failure", since=tx.recorded_at) or _block_time(tx)
        steps.append(_tx_step(f"{kind} failed", tx, failed_at))
    return steps


def with_durations(steps: Sequence[Step]) -> list[Step]:
    """`steps` with the time each took since the step before with a known time."""
    timed: list[Step] = []
    previous: datetime | None = None
    for step in steps:
        since = step.at - previous if step.at and previous else None
        timed.append(replace(step, since_previous=since))
        previous = step.at or previous
    return timed


def timeline(facts: RecordFacts, changes: Sequence[StatusChange] = ()) -> list[Step]:
    """The request's steps in order, from its recorded facts and its status `changes`."""
    published = _Changes(changes)
    steps = [Step("quoted", _parse_iso(facts.created_at))]
    deposits = [tx for tx in facts.transactions if tx.kind == "deposit"]
    for deposit in deposits[:1]:  # the request's own; a later stray is refunded on its own
        steps.extend(_deposit_steps(deposit, published))
    fills = [tx for tx in facts.transactions if tx.kind == "fill"]
    for fill in fills:
        steps.extend(_out_steps("fill", fill, published, "success"))
    failed_at = published.first("failure")
    told = any(step.name.endswith("failed") for step in steps)
    if failed_at is not None and not told:
        steps.append(Step("failed", failed_at))
    for refund in (tx for tx in facts.transactions if tx.kind == "refund"):
        steps.extend(_out_steps("refund", refund, published, "refund"))
    return with_durations(steps)
