"""A repayment: the Depository payout that pays the solver a deposit owed to it, and the one
transaction that carries a batch of them.

A repayment's nonce is the deposit's own payout nonce (`app.refunds.payout_nonce`), the one a
refund of that deposit part uses. The Depository pays each nonce once, so a deposit is paid out
at most once, by its refund or by its repayment, whichever executes first, whatever two
processes, a crash between signing and sending, or a reorg do. Each attempt signs the same
request while its expiration holds (`domain.call_request.payout_expiration`, counted from the
repayment's creation), so a repayment signed again is the payout signed before.

Deposits are never merged under one nonce (that would pay several deposits under one guard):
a batch is one transaction to the chain's Multicaller calling `Depository.execute` once per
deposit, each call allowed to fail, so a deposit paid meanwhile by its refund fails alone
(`NonceAlreadyUsed`) while the others are paid. A batch of one calls the Depository directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from eth_account.signers.local import LocalAccount

from crossfill.app.refunds import payout_call, payout_calldata, payout_nonce
from crossfill.contracts import calldata
from crossfill.domain.call_request import CallRequest, struct_hash
from crossfill.store.tables import Deposit, Repayment
from crossfill.types import NATIVE_EVM_ADDRESS

# The journal purpose of a batch's transaction: this and its first deposit's id.
PURPOSE = "repay"


def batch_purpose(first_deposit_id: int) -> str:
    """A batch's name in the journal: a deposit is repaid once ever, so its first deposit
    names it for good (every attempt for the batch shares it)."""
    return f"{PURPOSE}:{first_deposit_id}"


@dataclass(frozen=True)
class SignedRepayment:
    """One deposit's payout, signed by the allocator: `Depository.execute` calldata, and the
    EIP-712 hash the Depository logs when it executes (`CallExecuted`'s id)."""

    repayment_id: int
    payout_id: str
    expiration: int
    calldata: bytes


@dataclass(frozen=True)
class BatchCall:
    """The transaction paying a batch: whom the solver key calls, with what."""

    to: str
    data: bytes


def repayment_payout(deposit: Deposit, repayment: Repayment, *, expiration: int) -> CallRequest:
    """The payout of `repayment.amount` of the deposit's currency to the solver, under the
    deposit's payout nonce."""
    call = payout_call(
        repayment.recipient,
        deposit.currency,
        int(repayment.amount),
        native=deposit.currency.lower() == NATIVE_EVM_ADDRESS,
    )
    return CallRequest(calls=(call,), nonce=payout_nonce(deposit), expiration=expiration)


def sign_repayment(
    deposit: Deposit,
    repayment: Repayment,
    allocator: LocalAccount,
    *,
    expiration: int,
    chain_id: int,
    depository: str,
) -> SignedRepayment:
    payout = repayment_payout(deposit, repayment, expiration=expiration)
    payout_id = struct_hash(payout, chain_id=chain_id, depository=depository)
    data = payout_calldata(payout, allocator, chain_id=chain_id, depository=depository)
    return SignedRepayment(repayment.id, "0x" + payout_id.hex(), expiration, data)


def batch_call(
    signed: Sequence[SignedRepayment], *, depository: str, multicaller: str
) -> BatchCall:
    """One payout: the Depository itself; several: the Multicaller, each payout allowed to fail
    on its own."""
    if len(signed) == 1:
        return BatchCall(depository, signed[0].calldata)
    return BatchCall(multicaller, simulated_batch(signed, depository=depository))


def simulated_batch(signed: Sequence[SignedRepayment], *, depository: str) -> bytes:
    """The Multicaller call that runs each payout allowed to fail: simulated, it says which of
    them would execute (`calldata.multicall_results`), one by one, even for a batch of one."""
    return calldata.multicall([(depository, True, payout.calldata) for payout in signed])
