"""What a refund pays back and to whom; the payout's nonce is the deposit's own, so the
Depository can pay one deposit back once at most."""

from __future__ import annotations

from datetime import UTC, datetime

from eth_abi.abi import decode
from eth_account import Account

from crossfill.app.refunds import (
    AUTHORISATION_LIFETIME,
    failed_fills_usd,
    plan_refund,
    refund_calldata,
)
from crossfill.contracts import calldata
from crossfill.contracts.abi import function
from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.kinds.svm.config import SvmCurrencyConfig
from crossfill.kinds.svm.costs import svm_refund_cost_lamports, svm_refund_worth_sending
from crossfill.store.deposits import EXCESS, WHOLE
from crossfill.store.tables import Deposit, RequestTransaction

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)
USDC = "0x" + "11" * 20
DEPOSITOR = "0x" + "de" * 20
REFUND_TO = "0x" + "5a" * 20


def _deposit(
    *,
    currency: str = USDC,
    amount: int = 1_000_000,
    outcome: str | None = DepositVerdict.TOO_LOW,
    request_id: str | None = "0x" + "77" * 32,
    part: int = WHOLE,
) -> Deposit:
    """A deposit that decided its request (failed it), unless told otherwise."""
    return Deposit(
        tx_hash="0x" + "ab" * 32,
        log_index=2,
        part=part,
        currency=currency,
        amount=str(amount),
        depositor=DEPOSITOR,
        outcome=outcome,
        request_id=request_id,
    )


def test_a_failed_requests_token_deposit_goes_to_refund_to_net_of_gas() -> None:
    plan = plan_refund(_deposit(), REFUND_TO, native=False, gas_cost=30_000, now=NOW)
    assert plan is not None
    assert (plan.recipient, plan.currency, plan.amount) == (REFUND_TO, USDC, 970_000)
    (call,) = plan.payout.calls
    assert (call.to, call.value) == (USDC, 0)
    assert call.data == calldata.erc20_transfer(REFUND_TO, 970_000)
    assert plan.payout.expiration == int((NOW + AUTHORISATION_LIFETIME).timestamp())


def test_a_native_deposit_is_paid_back_as_value() -> None:
    plan = plan_refund(
        _deposit(currency="0x" + "00" * 20, amount=10**17),
        REFUND_TO,
        native=True,
        gas_cost=10**14,
        now=NOW,
    )
    assert plan is not None
    (call,) = plan.payout.calls
    assert (call.to, call.value, call.data) == (REFUND_TO, 10**17 - 10**14, b"")


def test_a_second_deposit_for_a_paid_order_goes_back_to_its_sender() -> None:
    """As recorded before strays were kept off their request: by its verdict."""
    double = _deposit(outcome=DepositVerdict.DOUBLE_SPEND)
    plan = plan_refund(double, REFUND_TO, native=False, gas_cost=1, now=NOW)
    assert plan is not None and plan.recipient == DEPOSITOR


def test_a_stray_goes_back_to_its_sender() -> None:
    stray = _deposit(outcome=DepositVerdict.REQUEST_ENDED, request_id=None)
    plan = plan_refund(stray, None, native=False, gas_cost=1, now=NOW)
    assert plan is not None and plan.recipient == DEPOSITOR


def test_an_excess_goes_to_its_requests_refund_to_under_a_nonce_of_its_own() -> None:
    excess = _deposit(outcome=DepositVerdict.EXCESS, part=EXCESS)
    whole = plan_refund(_deposit(), REFUND_TO, native=False, gas_cost=1, now=NOW)
    plan = plan_refund(excess, REFUND_TO, native=False, gas_cost=1, now=NOW)
    assert plan is not None and whole is not None
    assert plan.recipient == REFUND_TO
    assert plan.payout.nonce != whole.payout.nonce


def test_nothing_is_refunded_when_gas_eats_the_deposit() -> None:
    assert plan_refund(_deposit(amount=500), REFUND_TO, native=False, gas_cost=500, now=NOW) is None


def test_the_payout_nonce_is_the_deposits_own_whenever_it_is_planned() -> None:
    first = plan_refund(_deposit(), REFUND_TO, native=False, gas_cost=1, now=NOW)
    later = plan_refund(
        _deposit(), REFUND_TO, native=False, gas_cost=2, now=NOW + AUTHORISATION_LIFETIME
    )
    assert first is not None and later is not None
    assert first.payout.nonce == later.payout.nonce


def test_the_calldata_is_depository_execute_of_the_payout() -> None:
    plan = plan_refund(_deposit(), REFUND_TO, native=False, gas_cost=1, now=NOW)
    assert plan is not None
    data = refund_calldata(plan, Account.create(), chain_id=900001, depository="0x" + "dd" * 20)
    execute = function("Depository", "execute")
    assert data[:4] == execute.selector
    (calls, nonce, expiration), signature = decode(list(execute.input_types), data[4:])
    assert (nonce, expiration, len(signature)) == (plan.payout.nonce, plan.payout.expiration, 65)
    ((token, _data, value, _allow_failure),) = calls
    assert (token.lower(), value) == (USDC, 0)


def _sent(kind: str, status: str, usd: int | None) -> RequestTransaction:
    return RequestTransaction(kind=kind, status=status, fee_usd_micros=usd)


def test_the_gas_of_reverted_fills_is_kept_from_the_accepted_deposit_only() -> None:
    sent = [
        _sent("deposit", "success", 5),
        _sent("fill", "failure", 120_000),
        _sent("fill", "failure", 80_000),
        _sent("fill", "success", 1_000_000),  # a fill that paid is not charged
        _sent("refund", "failure", 30_000),  # nor the refund's own: priced when it is due
    ]
    assert failed_fills_usd(_deposit(outcome=DepositVerdict.ACCEPTED), sent) == 200_000
    # A second deposit for a paid order owes nothing of the order's fills.
    assert failed_fills_usd(_deposit(outcome=DepositVerdict.DOUBLE_SPEND), sent) == 0


def test_a_reverted_fill_without_a_value_makes_the_cost_unknown() -> None:
    sent = [_sent("fill", "failure", None)]
    assert failed_fills_usd(_deposit(outcome=DepositVerdict.ACCEPTED), sent) is None


SOL = SvmCurrencyConfig(address="1" * 32, symbol="SOL", name="Sol", decimals=9, usd_price=150)
SVM_USDC = SvmCurrencyConfig(
    address="EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    symbol="USDC",
    name="USD Coin",
    decimals=6,
    usd_price=1,
)


def test_sol_dust_is_not_worth_its_refunds_fee() -> None:
    fee = svm_refund_cost_lamports(SOL, new_token_account=False)
    assert not svm_refund_worth_sending(fee, SOL, SOL, fee)
    assert svm_refund_worth_sending(fee + 1, SOL, SOL, fee)


def test_a_token_refund_that_must_fund_a_token_account_is_judged_with_its_rent() -> None:
    """0.30 USD of USDC pays a refund's fee, not a new token account's rent (~0.31 USD)."""
    with_account = svm_refund_cost_lamports(SVM_USDC, new_token_account=False)
    without = svm_refund_cost_lamports(SVM_USDC, new_token_account=True)
    assert without - with_account == 2_039_280
    assert svm_refund_worth_sending(300_000, SVM_USDC, SOL, with_account)
    assert not svm_refund_worth_sending(300_000, SVM_USDC, SOL, without)
