"""A repayment's payout: the deposit's own payout nonce (the one its refund would use, so the
Depository pays the deposit out once at most), the solver paid the amount owed, and a batch
sent straight to the Depository or through the Multicaller with each payout allowed to fail."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from eth_account import Account

from crossfill.app.refunds import plan_refund
from crossfill.app.repayments import batch_call, batch_purpose, repayment_payout, sign_repayment
from crossfill.contracts import calldata
from crossfill.contracts.abi import function
from crossfill.domain.call_request import struct_hash
from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.kinds.evm.receipt_outcomes import executed_payouts
from crossfill.store.tables import Deposit, Repayment
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.unit.receipt_logs import call_executed_log

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
USDC = "0x" + "11" * 20
SOLVER = "0x" + "50" * 20
DEPOSITORY = "0x" + "d0" * 20
MULTICALLER = "0x" + "ca" * 20
CHAIN = 900001
EXPIRATION = 1_800_000_000


def _deposit(deposit_id: int = 7, *, currency: str = USDC, amount: int = 1_000_000) -> Deposit:
    return Deposit(
        id=deposit_id, tx_hash="0x" + f"{deposit_id:064x}", log_index=1, part=0,
        currency=currency, amount=str(amount), depositor="0x" + "de" * 20,
        outcome=DepositVerdict.ACCEPTED, request_id="0x" + "77" * 32,
    )  # fmt: skip


def _repayment(deposit: Deposit, amount: int) -> Repayment:
    return Repayment(
        id=deposit.id, deposit_id=deposit.id, amount=str(amount), recipient=SOLVER,
        currency=deposit.currency,
    )  # fmt: skip


@pytest.mark.parametrize("currency", [USDC, NATIVE_EVM_ADDRESS])
def test_a_repayment_and_a_refund_of_one_deposit_share_its_nonce(currency: str) -> None:
    deposit = _deposit(currency=currency)
    refund = plan_refund(deposit, None, native=currency != USDC, gas_cost=1, now=NOW)
    repayment = repayment_payout(deposit, _repayment(deposit, 990_000), expiration=EXPIRATION)
    assert refund is not None and repayment.nonce == refund.payout.nonce


def test_the_solver_is_paid_the_amount_owed_in_the_deposits_currency() -> None:
    token = repayment_payout(_deposit(), _repayment(_deposit(), 990_000), expiration=EXPIRATION)
    (call,) = token.calls
    assert (call.to, call.value, call.data) == (USDC, 0, calldata.erc20_transfer(SOLVER, 990_000))
    ether = _deposit(currency=NATIVE_EVM_ADDRESS)
    (call,) = repayment_payout(ether, _repayment(ether, 10**17), expiration=EXPIRATION).calls
    assert (call.to, call.value, call.data) == (SOLVER, 10**17, b"")


def test_a_payout_signed_again_is_the_same_payout() -> None:
    allocator = Account.create()
    deposit = _deposit()
    repayment = _repayment(deposit, 990_000)
    first, again = (
        sign_repayment(
            deposit,
            repayment,
            allocator,
            expiration=EXPIRATION,
            chain_id=CHAIN,
            depository=DEPOSITORY,
        )
        for _ in range(2)
    )
    assert first.payout_id == again.payout_id
    payout = repayment_payout(deposit, repayment, expiration=EXPIRATION)
    assert (
        first.payout_id == "0x" + struct_hash(payout, chain_id=CHAIN, depository=DEPOSITORY).hex()
    )


def test_one_payout_goes_to_the_depository_several_through_the_multicaller() -> None:
    allocator = Account.create()
    signed = [
        sign_repayment(
            _deposit(deposit_id),
            _repayment(_deposit(deposit_id), 1),
            allocator,
            expiration=EXPIRATION,
            chain_id=CHAIN,
            depository=DEPOSITORY,
        )
        for deposit_id in (1, 2, 3)
    ]
    alone = batch_call(signed[:1], depository=DEPOSITORY, multicaller=MULTICALLER)
    assert (alone.to, alone.data) == (DEPOSITORY, signed[0].calldata)
    batch = batch_call(signed, depository=DEPOSITORY, multicaller=MULTICALLER)
    assert batch.to == MULTICALLER
    (calls,) = function("Multicaller", "aggregate3").decode_arguments(batch.data[4:])
    assert [(target.lower(), allow, bytes(data)) for target, allow, data in calls] == [
        (DEPOSITORY, True, payout.calldata) for payout in signed
    ]


def test_the_payouts_a_receipt_shows_executed_are_told_by_their_hash() -> None:
    paid = "0x" + "ab" * 32
    logs = [
        call_executed_log(DEPOSITORY, payout_id=paid),
        call_executed_log("0x" + "99" * 20, payout_id="0x" + "cd" * 32),  # another contract's
    ]
    assert executed_payouts(logs, depository=DEPOSITORY) == {paid}


def test_a_batch_is_named_for_good_by_its_first_deposit() -> None:
    assert batch_purpose(1234567890) == "repay:1234567890"
    assert len(batch_purpose(9_999_999_999)) <= 16  # the journal's purpose column
