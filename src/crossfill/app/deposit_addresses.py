"""Deposit addresses: which request a transfer into one pays, and the sweep that pays it.

The first transfer seen at a strict address pays the request that was quoted for it. Every
later transfer is a child request of its own (listed with `includeChildRequests`): the same
terms under new ids, so the Depository judges it alone (filled if it pays the quoted currency,
at least the quoted amount, before the quote's expiry; refunded otherwise). Each sweep
deposits one transfer into the Depository under the order id of the request it pays; from
there the indexer, solver and refunder treat it as any deposit.
"""

from __future__ import annotations

from crossfill.contracts.deposit_addresses import Sweep


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
