"""Does a confirmed deposit pay for its request, and whose is it? Pure rules; the indexers of
every chain kind apply them.

Each deposit is judged once, in two steps. Its terms (`judge_deposit`, or the exchange's
`perps_transfers.judge_transfer`): the first rule it breaks is its verdict. Then its place
(`judge`): a request is decided by one deposit only, the first that reaches it while it waits
for one. That deposit *decides* it: accepted, it pays for the request (anything above the
quote is split off and returned); refused, the request fails with the verdict and the deposit
is refunded to the request's `refundTo`. Every other deposit is a *stray*, refunded to its own
depositor without touching the request: one for an unknown order, a second one for a paid
order, one arriving after its request ended, and refused dust (a deposit too small to pay its
own refund), so that nobody can decide another's request by sending a wei first.
"""

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
    # Its request had ended (failed on another deposit, refunded, filled without one) before
    # it came: returned to its depositor.
    REQUEST_ENDED = "REQUEST_ENDED"
    # What an accepted deposit paid above its quote, split off it and returned.
    EXCESS = "AMOUNT_ABOVE_QUOTE"


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


def judge_deposit(deposit: DepositFacts, expected: ExpectedDeposit | None) -> DepositVerdict:
    """The deposit against its request's terms. The first failing rule wins; the order
    matters for which reason the user sees."""
    if expected is None:
        return DepositVerdict.ORPHANED
    if deposit.chain_id != expected.origin_chain_id:
        return DepositVerdict.CHAIN_MISMATCH
    if deposit.currency.lower() != expected.currency.lower():
        return DepositVerdict.WRONG_CURRENCY
    if deposit.amount < expected.amount:
        return DepositVerdict.TOO_LOW
    if deposit.block_timestamp > expected.expires_at:
        return DepositVerdict.EXPIRED
    return DepositVerdict.ACCEPTED


@dataclass(frozen=True)
class Standing:
    """Where a deposit's request stands when the deposit is judged."""

    # A deposit was accepted for it already.
    paid: bool
    # No deposit decided it yet and it still takes one: waiting or depositing; failed before
    # any deposit came (its first deposit is refunded as its own); or filled early on a
    # deposit seen but not yet confirmed (a fast fill: that deposit is its own).
    open: bool


@dataclass(frozen=True)
class Judgement:
    verdict: DepositVerdict
    # The request bears this deposit's verdict (it pays for it, or fails it); else the
    # deposit is a stray, returned to its depositor.
    decides: bool
    # Of an accepted deposit: what it paid above the quote, to split off and return.
    excess: int = 0


def judge(
    verdict: DepositVerdict,
    *,
    amount: int,
    quoted: int,
    standing: Standing | None,
    refund_cost: int | None,
) -> Judgement:
    """The deposit's place: whether it decides its request (`standing`; None for an unknown
    order). `refund_cost` is what returning it would cost, in its own currency (None while
    unknown): a refused deposit at or below it is dust, and dust never decides."""
    if standing is None or verdict is DepositVerdict.ORPHANED:
        return Judgement(DepositVerdict.ORPHANED, decides=False)
    if standing.paid:
        return Judgement(DepositVerdict.DOUBLE_SPEND, decides=False)
    if not standing.open:
        return Judgement(DepositVerdict.REQUEST_ENDED, decides=False)
    if verdict is DepositVerdict.ACCEPTED:
        return Judgement(verdict, decides=True, excess=max(0, amount - quoted))
    if refund_cost is not None and amount <= refund_cost:
        return Judgement(verdict, decides=False)
    return Judgement(verdict, decides=True)
