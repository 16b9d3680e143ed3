"""Whose is a deposit: the first one that reaches a request waiting for it decides it; every
other one is a stray, returned to its depositor; refused dust never decides."""

from __future__ import annotations

import pytest

from crossfill.domain.deposit_checks import DepositVerdict, Judgement, Standing, judge

WAITING = Standing(paid=False, open=True)


def _judge(
    verdict: DepositVerdict,
    amount: int = 100,
    *,
    standing: Standing | None = WAITING,
    refund_cost: int | None = 10,
) -> Judgement:
    return judge(verdict, amount=amount, quoted=100, standing=standing, refund_cost=refund_cost)


def test_the_quoted_deposit_pays_for_its_request() -> None:
    assert _judge(DepositVerdict.ACCEPTED) == Judgement(DepositVerdict.ACCEPTED, decides=True)


def test_an_overpayment_pays_the_quote_and_splits_off_the_excess() -> None:
    assert _judge(DepositVerdict.ACCEPTED, 300) == Judgement(
        DepositVerdict.ACCEPTED, decides=True, excess=200
    )


@pytest.mark.parametrize(
    "verdict",
    [DepositVerdict.TOO_LOW, DepositVerdict.WRONG_CURRENCY, DepositVerdict.EXPIRED],
)
def test_a_refused_deposit_that_can_pay_its_refund_fails_the_request(
    verdict: DepositVerdict,
) -> None:
    assert _judge(verdict, 11) == Judgement(verdict, decides=True)


@pytest.mark.parametrize("verdict", [DepositVerdict.TOO_LOW, DepositVerdict.WRONG_CURRENCY])
def test_refused_dust_never_decides_the_request(verdict: DepositVerdict) -> None:
    """A wei sent first (by anyone who read the order id) leaves the request waiting."""
    assert _judge(verdict, 10) == Judgement(verdict, decides=False)


def test_without_a_refund_price_a_refused_deposit_decides_as_before() -> None:
    assert _judge(DepositVerdict.TOO_LOW, 1, refund_cost=None).decides


def test_a_second_deposit_for_a_paid_request_is_a_double_spend() -> None:
    judged = _judge(DepositVerdict.ACCEPTED, standing=Standing(paid=True, open=False))
    assert judged == Judgement(DepositVerdict.DOUBLE_SPEND, decides=False)


@pytest.mark.parametrize("verdict", [DepositVerdict.ACCEPTED, DepositVerdict.TOO_LOW])
def test_a_deposit_after_its_request_ended_is_a_stray(verdict: DepositVerdict) -> None:
    """Failed on an earlier deposit, or refunded: the late one is returned, whatever it is."""
    judged = _judge(verdict, standing=Standing(paid=False, open=False))
    assert judged == Judgement(DepositVerdict.REQUEST_ENDED, decides=False)


def test_an_unknown_orders_deposit_is_a_stray() -> None:
    assert _judge(DepositVerdict.ORPHANED, standing=None) == Judgement(
        DepositVerdict.ORPHANED, decides=False
    )
