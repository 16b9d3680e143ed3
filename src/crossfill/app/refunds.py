"""A refund: what a deposit that will not be filled pays back, to whom, and the Depository
payout the allocator authorises for it; or, for a deposit the Receiver forwarded to the solver
(protocol v1), the solver's own transfer back.

The payout's nonce is derived from the deposit itself (its transaction and log index), so the
Depository, which pays out each nonce once, can pay a deposit back at most once whatever the
service signs (a refund signed again after a revert, with a later expiration and another
amount, cannot execute beside the first). The amount is the deposit net of the refund's own
gas, priced when it is due.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from eth_account.signers.local import LocalAccount
from eth_utils.crypto import keccak

from crossfill.contracts import calldata
from crossfill.domain.call_request import CallRequest, DepositoryCall, sign_call_request
from crossfill.quoting.prices import gas_cost_on_chain
from crossfill.runtime import ChainRuntime
from crossfill.store.deposits import EXCESS, decides
from crossfill.store.tables import Deposit

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
    call = (
        DepositoryCall(to=recipient, data=b"", value=net)
        if native
        else DepositoryCall(
            to=deposit.currency, data=calldata.erc20_transfer(recipient, net), value=0
        )
    )
    payout = CallRequest(
        calls=(call,),
        nonce=payout_nonce(deposit),
        expiration=int((now + AUTHORISATION_LIFETIME).timestamp()),
    )
    return RefundPlan(recipient, deposit.currency, net, payout)


def refund_calldata(
    plan: RefundPlan, allocator: LocalAccount, *, chain_id: int, depository: str
) -> bytes:
    """Depository.execute(payout, the allocator's signature of it)."""
    signature = sign_call_request(allocator, plan.payout, chain_id=chain_id, depository=depository)
    payout = plan.payout
    return calldata.depository_execute(
        [call.as_tuple() for call in payout.calls], payout.nonce, payout.expiration, signature
    )
