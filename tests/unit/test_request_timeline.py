"""A request read as an operator's timeline: each step in order with the time it took, from the
times the service recorded (a transaction's first record, the status changes it published) or,
without those, the block times; fees quoted beside actual; reasons in words with their code."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from crossfill.domain.reason_words import Reason, reasons
from crossfill.domain.record_facts import Moved, RecordFacts, TxFacts
from crossfill.domain.request_fees import FeeRow, fee_rows, fees_of
from crossfill.domain.request_record import v3_record
from crossfill.domain.request_timeline import StatusChange, timeline
from crossfill.quoting.response import quote_wire
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support import quote_fixtures as fx
from tests.support.record_facts import facts_of

ORIGIN, DESTINATION = fx.CHAINS
DEPOSIT, FILL, REFUND = ("0x" + digit * 64 for digit in "def")
CREATED = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
WIRE = quote_wire(fx.quote(fx.body()), allowance=None, user_balance=None)


def _at(seconds: float) -> datetime:
    return CREATED + timedelta(seconds=seconds)


def _tx(
    kind: str, tx_hash: str, *, recorded: float | None, mined: int | None, status: str = "success"
) -> TxFacts:
    chain_id = DESTINATION if kind == "fill" else ORIGIN
    return TxFacts(
        kind=kind,
        chain_id=chain_id,
        tx_hash=tx_hash,
        block_number=7 if mined is not None else None,
        fee="21000",
        timestamp=int(_at(mined).timestamp()) if mined is not None else None,
        status=status,
        moved=Moved(NATIVE_EVM_ADDRESS, 10**17, 300_000_000),
        recorded_at=_at(recorded) if recorded is not None else None,
    )


def _facts(status: str, *transactions: TxFacts, **extra: Any) -> RecordFacts:
    return facts_of(WIRE, status, *transactions, **extra)


def _changes(*moves: tuple[str, float]) -> list[StatusChange]:
    return [StatusChange(status, _at(seconds)) for status, seconds in moves]


def test_a_filled_request_shows_each_step_at_the_time_the_service_recorded_it() -> None:
    facts = _facts(
        "success",
        _tx("deposit", DEPOSIT, recorded=2.0, mined=2),
        _tx("fill", FILL, recorded=3.5, mined=4),
    )
    changes = _changes(("waiting", 0), ("pending", 3.0), ("submitted", 3.5), ("success", 4.25))
    steps = timeline(facts, changes)
    assert [step.name for step in steps] == [
        "quoted", "deposit seen", "deposit confirmed", "fill sent", "fill mined",
    ]  # fmt: skip
    assert [step.at for step in steps] == [_at(0), _at(2), _at(3), _at(3.5), _at(4.25)]
    assert steps[0].since_previous is None
    assert [step.since_previous for step in steps[1:]] == [
        timedelta(seconds=seconds) for seconds in (2, 1, 0.5, 0.75)
    ]
    assert (steps[1].chain_id, steps[1].tx_hash, steps[1].block) == (ORIGIN, DEPOSIT, 7)
    assert (steps[4].chain_id, steps[4].tx_hash) == (DESTINATION, FILL)


def test_without_published_changes_the_block_times_stand_in() -> None:
    facts = _facts(
        "success",
        _tx("deposit", DEPOSIT, recorded=None, mined=12),
        _tx("fill", FILL, recorded=None, mined=20),
    )
    steps = timeline(facts)
    assert [(step.name, step.at) for step in steps] == [
        ("quoted", _at(0)),
        ("deposit seen", _at(12)),
        ("deposit confirmed", _at(12)),
        ("fill sent", None),
        ("fill mined", _at(20)),
    ]
    assert steps[-1].since_previous == timedelta(seconds=8)


def test_a_deposit_seen_but_not_final_is_only_seen() -> None:
    facts = _facts("waiting", _tx("deposit", DEPOSIT, recorded=1, mined=None, status="pending"))
    assert [step.name for step in timeline(facts, _changes(("waiting", 0)))] == [
        "quoted",
        "deposit seen",
    ]


def test_a_refund_after_a_failed_fill_names_both_and_why() -> None:
    facts = _facts(
        "refund",
        _tx("deposit", DEPOSIT, recorded=1, mined=1),
        _tx("fill", FILL, recorded=3, mined=4, status="failure"),
        _tx("refund", REFUND, recorded=6, mined=7),
        fail_reason="SLIPPAGE",
    )
    changes = _changes(
        ("waiting", 0), ("pending", 2), ("submitted", 3), ("failure", 4.5), ("refund", 7.5)
    )
    steps = timeline(facts, changes)
    assert [(step.name, step.at) for step in steps] == [
        ("quoted", _at(0)),
        ("deposit seen", _at(1)),
        ("deposit confirmed", _at(2)),
        ("fill sent", _at(3)),
        ("fill failed", _at(4.5)),
        ("refund sent", _at(6)),
        ("refund mined", _at(7.5)),
    ]
    (reason,) = reasons(facts.fail_reason, facts.refund_fail_reason)
    assert (reason.what, reason.code) == ("failed", "SLIPPAGE")
    assert "slippage" in reason.words


def test_an_underpaid_deposit_fails_when_it_is_confirmed_and_is_refunded() -> None:
    facts = _facts(
        "refund",
        _tx("deposit", DEPOSIT, recorded=1, mined=1),
        _tx("refund", REFUND, recorded=3, mined=4),
        fail_reason="DEPOSITED_AMOUNT_TOO_LOW_TO_FILL",
    )
    changes = _changes(("waiting", 0), ("failure", 2), ("refund", 4))
    names = [(step.name, step.at) for step in timeline(facts, changes)]
    assert names == [
        ("quoted", _at(0)),
        ("deposit seen", _at(1)),
        ("deposit confirmed", _at(2)),
        ("failed", _at(2)),
        ("refund sent", _at(3)),
        ("refund mined", _at(4)),
    ]


def test_reasons_read_in_words_and_unknown_codes_still_read() -> None:
    said = reasons("DEPOSITED_AMOUNT_TOO_LOW_TO_FILL", "AMOUNT_TOO_LOW_TO_REFUND")
    assert [(reason.what, reason.code) for reason in said] == [
        ("failed", "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL"),
        ("not refunded", "AMOUNT_TOO_LOW_TO_REFUND"),
    ]
    assert said[0].words.startswith("The deposit was smaller than the quote")
    assert Reason("failed", "MINT_NOT_ACTIVE").words == "Mint not active."
    assert reasons(None, None) == []


def test_fees_show_quoted_beside_actual_once_there_is_one() -> None:
    waiting = v3_record(_facts("waiting"))
    assert all(row.actual_usd is None for row in fee_rows(waiting))
    quoted = {row.component: row for row in fee_rows(waiting)}
    assert set(quoted) == {"swap", "execution", "platform", "app", "sponsored"}
    filled = v3_record(
        _facts(
            "success",
            _tx("deposit", DEPOSIT, recorded=1, mined=1),
            _tx("fill", FILL, recorded=2, mined=3),
        )
    )
    rows = {row.component: row for row in fee_rows(filled)}
    assert rows["execution"].quoted_usd == quoted["execution"].quoted_usd
    assert rows["execution"].actual_usd is not None
    assert rows["swap"] == FeeRow("swap", "0", "0", "0")
    shown = fees_of(filled)
    assert shown.currency_symbol == WIRE["details"]["currencyIn"]["currency"]["symbol"]
    assert shown.app_fees == [] and shown.sponsorship is None
