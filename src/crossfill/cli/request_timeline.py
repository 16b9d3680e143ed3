"""A v3 request record (as GET /requests/v3 returns it) → the steps an operator reads: quoted,
deposit, fill or refund, with times, the time each step took, and fees quoted vs actual."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

_OUT_STEP = {"pending": "sent", "success": "mined", "failure": "failed"}


@dataclass(frozen=True)
class Step:
    """One step: what happened, when (None: not known), and the transaction if there was one."""

    name: str
    at: datetime | None
    since_previous: timedelta | None = None
    chain_id: int | None = None
    tx_hash: str | None = None
    block: int | None = None


@dataclass(frozen=True)
class FeeRow:
    component: str
    quoted_usd: str
    actual_usd: str | None  # None until the request has ended


def _iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _tx_step(name: str, tx: Mapping[str, Any]) -> Step:
    timestamp = int(tx.get("timestamp") or 0)
    return Step(
        name=name,
        at=datetime.fromtimestamp(timestamp, UTC) if timestamp else None,
        chain_id=tx.get("chainId"),
        tx_hash=tx.get("txHash"),
        block=tx.get("block"),
    )


def _out_name(record: Mapping[str, Any], tx: Mapping[str, Any]) -> str:
    """A failed fill is the record's failedTxHash; in a refunded request the others refund."""
    if tx.get("txHash") == record["data"].get("failedTxHash"):
        return "fill failed"
    kind = "refund" if record["status"] == "refund" else "fill"
    return f"{kind} {_OUT_STEP.get(str(tx.get('status')), str(tx.get('status')))}"


def _with_durations(steps: list[Step]) -> list[Step]:
    timed: list[Step] = []
    previous: datetime | None = None
    for step in steps:
        since = step.at - previous if step.at and previous else None
        timed.append(Step(step.name, step.at, since, step.chain_id, step.tx_hash, step.block))
        previous = step.at or previous
    return timed


def timeline(record: Mapping[str, Any]) -> list[Step]:
    """The request's steps in order: quoted (its creation), each deposit, each transaction
    out (fill sent, mined or failed; a refund), each with the time since the step before."""
    data = record["data"]
    steps = [Step("quoted", _iso(record["createdAt"]))]
    for tx in data["inTxs"]:
        failed = tx.get("status") == "failure"
        steps.append(_tx_step("deposit failed" if failed else "deposit confirmed", tx))
    steps.extend(_tx_step(_out_name(record, tx), tx) for tx in data["outTxs"])
    return _with_durations(steps)


def fee_rows(record: Mapping[str, Any]) -> list[FeeRow]:
    """Each fee component's quoted USD value beside the actual one (once there is one)."""
    fees = record["data"]["fees"]
    actual: Mapping[str, Any] = fees.get("actual") or {}
    return [
        FeeRow(name, str(quoted["usd"]), str(actual[name]["usd"]) if name in actual else None)
        for name, quoted in fees["quoted"].items()
    ]


def reasons(record: Mapping[str, Any]) -> list[str]:
    """Why a request failed or was not refunded, in words with the code."""
    data = record["data"]
    said = [("failed", data.get("failReason")), ("not refunded", data.get("refundFailReason"))]
    return [f"{what}: {code.replace('_', ' ').lower()} ({code})" for what, code in said if code]
