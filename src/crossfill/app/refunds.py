"""A refund: what a deposit that will not be filled pays back, to whom, and the Depository
payout the allocator authorises for it; or, for a deposit the Receiver forwarded to the solver
(protocol v1), the solver's own transfer back.

The payout's nonce is derived from the deposit itself (its transaction and log index), so the
Depository, which pays out each nonce once, can pay a deposit back at most once whatever the
service signs (a refund signed again after a revert, with a later expiration and another
amount, cannot execute beside the first). The amount is the deposit net of the refund's own
gas, priced when it is due, and of the gas of the order's fills that were mined and reverted
(`failed_fills_usd`): a fill simulated without a revert can still revert in its block (a
destination call whose caller changed its state just before), and the solver does not pay for
a caller's revert. That gas is in the request's actual fees (`execution`) with the refund's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from eth_account.signers.local import LocalAccount
from eth_utils.crypto import keccak

from crossfill.contracts import calldata
from crossfill.domain.call_request import CallRequest, DepositoryCall, sign_call_request
from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.quoting.prices import gas_cost_on_chain
from crossfill.store.deposits import EXCESS, decides
from crossfill.store.tables import Deposit, RequestTransaction

AUTHORISATION_LIFETIME = timedelta(hours=1)


@dataclass(frozen=True)
class RefundPlan:
    recipient: str
    currency: str
    amount: int  # net of the refund's gas
    payout: CallRequest


def payout_nonce(deposit: Deposit) -> int:
    """One per deposit part: the excess split off a deposit has a nonce of its own."""
    part = f":{deposit.part}" if deposit.part == EXCESS else ""
    return int.from_bytes(keccak(f"{deposit.tx_hash}:{deposit.log_index}{part}".encode()))


def payout_call(recipient: str, currency: str, amount: int, *, native: bool) -> DepositoryCall:
    """The Depository's call paying `amount` of `currency` to `recipient`: ether as the call's
    value, a token by its `transfer`."""
    if native:
        return DepositoryCall(to=recipient, data=b"", value=amount)
    return DepositoryCall(to=currency, data=calldata.erc20_transfer(recipient, amount), value=0)


def refund_gas_cost(chain: ChainRuntime, currency_address: str, *, now: datetime) -> int | None:
    """What refunding a deposit of `currency_address` costs in gas, priced in that currency
    (`quoting.prices.gas_cost_on_chain`); None while there is no gas price or no price, or the
    currency is not one the chain serves."""
    fees = chain.config.fees
    native = currency_address.lower() == chain.config.native_currency.address.lower()
    gas = fees.refund_gas_native if native else fees.refund_gas_erc20
    return gas_cost_on_chain(chain.config, chain.state, currency_address, gas, int(now.timestamp()))


@dataclass(frozen=True)
class SolverRefund:
    """A v1 deposit is in the solver's inventory: the solver sends `amount` of the deposited
    currency (native: the Receiver forwards only ether) to `recipient` itself. Sent once: the
    refund is journalled under the deposit before it is broadcast."""

    recipient: str
    amount: int  # net of the refund's gas


def failed_fills_usd(deposit: Deposit, transactions: Iterable[RequestTransaction]) -> int | None:
    """What the request's reverted fills cost in gas, in micro-USD as valued when each was
    mined, when `deposit` is the one they were to fill (its accepted deposit); 0 for any
    other deposit. None when one of them has no value (no price when it was mined)."""
    if deposit.outcome != DepositVerdict.ACCEPTED:
        return 0
    spent = [
        tx.fee_usd_micros for tx in transactions if tx.kind == "fill" and tx.status == "failure"
    ]
    return None if None in spent else sum(usd or 0 for usd in spent)


def refund_recipient(deposit: Deposit, refund_to: str | None) -> str:
    """The `refundTo` of the request the deposit decided (or of the excess split off it); a
    stray (an unknown order's, a second one, one after its request ended, dust) goes back to
    whoever sent it."""
    owned = decides(deposit) or (deposit.part == EXCESS and deposit.request_id is not None)
    return refund_to if owned and refund_to is not None else deposit.depositor


def plan_solver_refund(
    deposit: Deposit, refund_to: str | None, *, gas_cost: int
) -> SolverRefund | None:
    """None when the gas would eat the whole deposit."""
    net = int(deposit.amount) - gas_cost
    if net <= 0:
        return None
    return SolverRefund(refund_recipient(deposit, refund_to), net)


def plan_refund(
    deposit: Deposit, refund_to: str | None, *, native: bool, gas_cost: int, now: datetime
) -> RefundPlan | None:
    """To `refund_recipient`; None when the gas would eat the whole deposit."""
    net = int(deposit.amount) - gas_cost
    if net <= 0:
        return None
    recipient = refund_recipient(deposit, refund_to)
    payout = CallRequest(
        calls=(payout_call(recipient, deposit.currency, net, native=native),),
        nonce=payout_nonce(deposit),
        expiration=int((now + AUTHORISATION_LIFETIME).timestamp()),
    )
    return RefundPlan(recipient, deposit.currency, net, payout)


def refund_calldata(
    plan: RefundPlan, allocator: LocalAccount, *, chain_id: int, depository: str
) -> bytes:
    """Depository.execute(payout, the allocator's signature of it)."""
    return payout_calldata(plan.payout, allocator, chain_id=chain_id, depository=depository)


def payout_calldata(
    payout: CallRequest, allocator: LocalAccount, *, chain_id: int, depository: str
) -> bytes:
    """Depository.execute(payout, the allocator's signature of it): any payout the allocator
    authorises (a refund, an app-fee claim, a repayment)."""
    signature = sign_call_request(allocator, payout, chain_id=chain_id, depository=depository)
    return calldata.depository_execute(
        [call.as_tuple() for call in payout.calls], payout.nonce, payout.expiration, signature
    )
