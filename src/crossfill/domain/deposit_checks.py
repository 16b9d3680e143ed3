"""Does a confirmed deposit pay for its request? Pure rules; the indexer applies them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class DepositVerdict(StrEnum):
    ACCEPTED = "ACCEPTED"
    ORPHANED = "ORPHANED_DEPOSIT_REFUND"
    CHAIN_MISMATCH = "DEPOSIT_CHAIN_MISMATCH"
    WRONG_CURRENCY = "INCORRECT_DEPOSIT_CURRENCY"
    TOO_LOW = "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL"
    EXPIRED = "ORDER_EXPIRED"
    DOUBLE_SPEND = "DOUBLE_SPEND"
    # An exchange transfer of another amount than the one its request quoted (and the user
    # signed): it pays for nothing and is sent back.
    WRONG_AMOUNT = "INCORRECT_PAYMENT"


@dataclass(frozen=True)
class DepositFacts:
    chain_id: int
    currency: str
    amount: int
    block_timestamp: int


@dataclass(frozen=True)
class ExpectedDeposit:
    origin_chain_id: int
    currency: str
    amount: int
    expires_at: int
    already_paid: bool


def judge_deposit(deposit: DepositFacts, expected: ExpectedDeposit | None) -> DepositVerdict:
    """The first failing rule wins; the order matters for which reason the user sees."""
    if expected is None:
        return DepositVerdict.ORPHANED
    if expected.already_paid:
        return DepositVerdict.DOUBLE_SPEND
    if deposit.chain_id != expected.origin_chain_id:
        return DepositVerdict.CHAIN_MISMATCH
    if deposit.currency.lower() != expected.currency.lower():
        return DepositVerdict.WRONG_CURRENCY
    if deposit.amount < expected.amount:
        return DepositVerdict.TOO_LOW
    if deposit.block_timestamp > expected.expires_at:
        return DepositVerdict.EXPIRED
    return DepositVerdict.ACCEPTED
