"""Deposit addresses: which request a transfer into one pays, and the sweep that pays it.

- strict: the first transfer pays the request quoted for the address; what it brings beyond
  the quoted amount is split off and refunded as a child request of its own (`excess`,
  failReason INCORRECT_PAYMENT). Every later transfer is
  a child request (listed with `includeChildRequests`) on the same terms under ids of its own,
  so the Depository judges it alone: filled if it pays the quoted currency, at least the quoted
  amount, before the quote's expiry; refunded otherwise.
- open: every transfer is a child request priced when it arrives, for the amount that arrived
  (`arrival_request`); when it cannot be priced (below the minimum, no route) or is in another
  currency, the child fails at once and the transfer is refunded.

Each sweep deposits one transfer into the Depository under the order id of the request it
pays; from there the indexer, solver and refunder treat it as any deposit.

A transfer worth no more than the gas of its own sweep (one-wei transfers cost the sender
21,000 gas each, and would cost the solver a sweep each) is not swept: it is recorded as a
child request that has failed, too small to refund (`too_small_to_sweep`, `dust_reason`), and
left at the address, where its recovery address can take it. It never pays the quoted
request, so a real payment made after it is judged on its own. The same holds for the excess
of an overpaid strict transfer.
"""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.contracts.deposit_addresses import Sweep
from crossfill.quoting.deposit_address import OPEN
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteRequest

DEPOSIT_ADDRESS_MISMATCH = "DEPOSIT_ADDRESS_MISMATCH"
# The refund of what an overpaid strict transfer brought beyond the quoted amount.
OVERPAID = "INCORRECT_PAYMENT"
TOO_LOW = "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL"
NO_QUOTES = "NO_QUOTES"
# The refundFailReason of a transfer left at its address: worth less than moving it.
TOO_LOW_TO_REFUND = "AMOUNT_TOO_LOW_TO_REFUND"


@dataclass(frozen=True)
class AddressOwner:
    """The terms of the request quoted for a deposit address, as stored."""

    type: str
    user: str
    origin_chain_id: int
    destination_chain_id: int
    origin_currency: str
    destination_currency: str
    recipient: str
    refund_to: str
    recovery_address: str | None
    referrer: str | None


def repriced(owner: AddressOwner) -> bool:
    """Whether each transfer is priced when it arrives (an open address)."""
    return owner.type == OPEN


def mismatch(owner: AddressOwner, currency: str) -> str | None:
    """The fail reason of a transfer in another currency than the address was quoted for."""
    if currency.lower() != owner.origin_currency.lower():
        return DEPOSIT_ADDRESS_MISMATCH
    return None


def excess(owner: AddressOwner, quoted: int, currency: str, amount: int) -> int:
    """What a strict address's paying transfer brought beyond the quoted amount, refunded as a
    leg of its own (0: none). An open address prices the whole amount instead."""
    if repriced(owner) or mismatch(owner, currency) is not None:
        return 0
    return max(0, amount - quoted)


def too_small_to_sweep(amount: int, sweep_cost: int | None) -> bool:
    """Whether a transfer is worth no more than the gas of its own sweep (`sweep_cost`, in the
    transfer's currency). A cost that cannot be priced now (no gas price or no price yet)
    judges nothing: the transfer is swept, so a user's money is never held for want of a
    price."""
    return sweep_cost is not None and amount <= sweep_cost


def dust_reason(owner: AddressOwner, currency: str) -> str:
    """The failReason of a transfer too small to sweep: another currency than the address
    was quoted for, else too low to fill (a quote's amount covers its fees, the sweep's gas
    among them)."""
    return mismatch(owner, currency) or TOO_LOW


def arrival_request(owner: AddressOwner, amount: int) -> QuoteRequest:
    """The quote an open address's transfer is priced by: the amount that arrived, on the
    address's route, to its recipient, refunds to its `refundTo`."""
    return QuoteRequest(
        user=owner.user,
        origin_chain_id=owner.origin_chain_id,
        destination_chain_id=owner.destination_chain_id,
        origin_currency=owner.origin_currency,
        destination_currency=owner.destination_currency,
        amount=str(amount),
        trade_type="EXACT_INPUT",
        recipient=owner.recipient,
        refund_to=owner.refund_to,
        recovery_address=owner.recovery_address,
        referrer=owner.referrer,
        use_deposit_address=True,
        strict=False,
    )


def unpriced_reason(error: QuoteError) -> str:
    """Why an arrival that could not be priced is refunded (a request `failReason`)."""
    return TOO_LOW if error.error_code == "AMOUNT_TOO_LOW" else NO_QUOTES


def sweep_of(
    *, key: str, recovery_address: str | None, transfer_currency: str, amount: int,
    depositor: str, order_id: str,
) -> Sweep:  # fmt: skip
    """The factory call depositing one transfer for the order of the request it pays."""
    return Sweep(
        key=bytes.fromhex(key[2:]),
        recovery_address=recovery_address,
        currency=transfer_currency,
        amount=amount,
        depositor=depositor,
        order_id=bytes.fromhex(order_id[2:]),
    )
