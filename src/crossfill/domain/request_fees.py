"""A v3 request record's fees as an operator reads them (pure): each component quoted beside
what was actually charged, the app fees per recipient, and the fee sponsorship (what the
quote sponsored, and what a sponsor paid). `crossfill requests show` and the explorer's request
page both read it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Record = Mapping[str, Any]  # a v3 request record (`domain.request_record.v3_record`)


@dataclass(frozen=True)
class FeeRow:
    component: str
    quoted_usd: str
    quoted_amount: str  # in the fee currency, formatted
    actual_usd: str | None  # None until the request has ended


@dataclass(frozen=True)
class AppFeeRow:
    recipient: str
    bps: str
    quoted_amount: str  # formatted, in the fee currency
    paid_amount: str | None  # None until paid out
    paid_usd: str | None


@dataclass(frozen=True)
class SponsorPayment:
    """What a sponsor wallet paid for the request: its fees (`fees`) or its gas (`gas`)."""

    paid_for: str
    payer: str
    chain_id: int
    amount: str  # smallest units of what it paid in (wei for gas)


@dataclass(frozen=True)
class Sponsorship:
    sponsored_amount: str  # formatted, in the fee currency
    sponsored_usd: str
    user_pays_amount: str
    payments: Sequence[SponsorPayment]


@dataclass(frozen=True)
class Fees:
    currency_symbol: str
    rows: Sequence[FeeRow]
    app_fees: Sequence[AppFeeRow]
    sponsorship: Sponsorship | None


def fee_rows(record: Record) -> list[FeeRow]:
    """Each fee component's quoted value beside the actual one (once there is one)."""
    fees = record["data"]["fees"]
    actual: Mapping[str, Any] = fees.get("actual") or {}
    return [
        FeeRow(
            name,
            str(quoted["usd"]),
            str(quoted.get("amountFormatted", "")),
            str(actual[name]["usd"]) if name in actual else None,
        )
        for name, quoted in fees["quoted"].items()
    ]


def app_fee_rows(record: Record) -> list[AppFeeRow]:
    """Per recipient: the share quoted and, once settled, what was paid out."""
    app_fees = record["data"]["appFees"]
    paid = {(fee["recipient"], fee["bps"]): fee for fee in app_fees.get("actual") or ()}
    rows = []
    for fee in app_fees.get("quoted") or ():
        settled = paid.get((fee["recipient"], fee["bps"]))
        rows.append(
            AppFeeRow(
                recipient=str(fee["recipient"]),
                bps=str(fee["bps"]),
                quoted_amount=str(fee["amountFormatted"]),
                paid_amount=None if settled is None else str(settled["amountFormatted"]),
                paid_usd=None if settled is None else str(settled["amountUsd"]),
            )
        )
    return rows


def _payment(paid_for: str, payment: Mapping[str, Any] | None) -> list[SponsorPayment]:
    if not payment:
        return []
    return [
        SponsorPayment(
            paid_for, str(payment["address"]), int(payment["chainId"]), str(payment["amount"])
        )
    ]


def sponsorship(record: Record) -> Sponsorship | None:
    """What the quote sponsored and what sponsors paid; None when nobody sponsors anything."""
    phases = record["data"]["feeSponsorship"]
    quoted: Mapping[str, Any] | None = phases.get("quoted")
    actual: Mapping[str, Any] = phases.get("actual") or {}
    payments = _payment("fees", actual.get("sponsorPayment"))
    payments += _payment("gas", actual.get("gasPayment"))
    sponsored = (quoted or {}).get("sponsoredTotal") or {}
    user_pays = (quoted or {}).get("userPaysTotal") or {}
    if int(sponsored.get("amount") or 0) == 0 and not payments:
        return None
    return Sponsorship(
        sponsored_amount=str(sponsored.get("amountFormatted", "0")),
        sponsored_usd=str(sponsored.get("amountUsd", "0")),
        user_pays_amount=str(user_pays.get("amountFormatted", "")),
        payments=payments,
    )


def fees_of(record: Record) -> Fees:
    return Fees(
        currency_symbol=str(record["data"]["fees"]["currency"].get("symbol", "")),
        rows=fee_rows(record),
        app_fees=app_fee_rows(record),
        sponsorship=sponsorship(record),
    )
