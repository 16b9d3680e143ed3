"""Does an exchange transfer pay for its withdrawal? Exactly the quoted token, DEX and amount,
in time, once."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest

from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.kinds.perps.transfers import IncomingTransfer, QuotedTransfer, judge_transfer

TRANSFER = IncomingTransfer(
    hash="0x" + "ab" * 32, time_ms=1_000, sender="0x" + "11" * 20, token="USDC",
    source_dex="", destination_dex="", amount=Decimal("25.5"), nonce=42,
)  # fmt: skip
QUOTED = QuotedTransfer(
    token="USDC:0x6d1e7cde53ba9467b783cb7c530ce054", source_dex="", amount=25_500_000,
    decimals=6, expires_at_ms=2_000,
)  # fmt: skip


def test_the_quoted_transfer_is_accepted() -> None:
    assert judge_transfer(TRANSFER, QUOTED) is DepositVerdict.ACCEPTED


def test_a_transfer_without_a_mapping_is_an_orphan() -> None:
    assert judge_transfer(TRANSFER, None) is DepositVerdict.ORPHANED


@pytest.mark.parametrize(
    ("transfer", "quoted", "verdict"),
    [
        ({"amount": Decimal("25.4")}, {}, DepositVerdict.TOO_LOW),
        ({"amount": Decimal("30")}, {}, DepositVerdict.WRONG_AMOUNT),
        # More decimals than the currency has: cannot be the signed amount.
        ({"amount": Decimal("25.5000001")}, {}, DepositVerdict.WRONG_AMOUNT),
        ({"token": "HYPE"}, {}, DepositVerdict.WRONG_CURRENCY),
        ({"source_dex": "spot"}, {}, DepositVerdict.WRONG_CURRENCY),
        ({"time_ms": 2_001}, {}, DepositVerdict.EXPIRED),
    ],
)
def test_anything_else_is_refused_with_its_reason(
    transfer: dict[str, object], quoted: dict[str, object], verdict: DepositVerdict
) -> None:
    judged = judge_transfer(replace(TRANSFER, **transfer), replace(QUOTED, **quoted))  # type: ignore[arg-type]
    assert judged is verdict


def test_the_wrong_amount_reason_is_a_spec_fail_reason() -> None:
    assert DepositVerdict.WRONG_AMOUNT.value == "INCORRECT_PAYMENT"
