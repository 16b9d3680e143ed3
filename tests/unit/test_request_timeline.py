"""A v3 record read as an operator's timeline: steps in order with the time each took, the
failed fill and the refund told apart, fees quoted beside actual, reasons in words."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from crossfill.cli.request_timeline import FeeRow, fee_rows, reasons, timeline

DEPOSIT, FILL, REFUND = ("0x" + digit * 64 for digit in "def")
CREATED = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def _tx(tx_hash: str, chain_id: int, seconds: int, status: str = "success") -> dict[str, Any]:
    at = int((CREATED + timedelta(seconds=seconds)).timestamp())
    return {"txHash": tx_hash, "chainId": chain_id, "block": 7, "timestamp": at, "status": status}


def _record(status: str, out_txs: list[dict[str, Any]], **data: Any) -> dict[str, Any]:
    usd = {"usd": "0.5", "amount": "1", "amountFormatted": "1"}
    return {
        "id": "0x" + "01" * 32,
        "status": status,
        "createdAt": "2026-11-22T12:00:00.000Z",
        "data": {
            "inTxs": [_tx(DEPOSIT, 900001, 12)],
            "outTxs": out_txs,
            "failedTxHash": None,
            "failReason": None,
            "refundFailReason": None,
            "fees": {"quoted": {"execution": usd}, "actual": None},
            **data,
        },
    }


def test_a_filled_request_shows_each_step_with_its_transaction_and_the_time_it_took() -> None:
    steps = timeline(_record("success", [_tx(FILL, 900002, 20)]))
    assert [step.name for step in steps] == ["quoted", "deposit confirmed", "fill mined"]
    assert steps[0].at == CREATED and steps[0].since_previous is None
    assert steps[1].since_previous == timedelta(seconds=12)
    assert (steps[2].chain_id, steps[2].tx_hash, steps[2].block) == (900002, FILL, 7)
    assert steps[2].since_previous == timedelta(seconds=8)


def test_a_fill_not_yet_mined_is_sent_and_has_no_time() -> None:
    pending = {**_tx(FILL, 900002, 0, status="pending"), "timestamp": 0}
    steps = timeline(_record("submitted", [pending]))
    assert (steps[-1].name, steps[-1].at, steps[-1].since_previous) == ("fill sent", None, None)


def test_a_refund_after_a_failed_fill_names_both_and_why() -> None:
    record = _record(
        "refund",
        [_tx(FILL, 900002, 20, status="failure"), _tx(REFUND, 900001, 50)],
        failedTxHash=FILL,
        failReason="SLIPPAGE",
    )
    names = [step.name for step in timeline(record)]
    assert names == ["quoted", "deposit confirmed", "fill failed", "refund mined"]
    assert reasons(record) == ["failed: slippage (SLIPPAGE)"]


def test_fees_show_quoted_beside_actual_once_there_is_one() -> None:
    record = _record("waiting", [])
    assert fee_rows(record) == [FeeRow("execution", "0.5", None)]
    record["data"]["fees"]["actual"] = {"execution": {"usd": "0.42"}}
    assert fee_rows(record) == [FeeRow("execution", "0.5", "0.42")]
