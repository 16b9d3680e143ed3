"""Perps refunder: sends back, from the solver's exchange account, transfers that paid for
nothing.

A transfer is due when it was not accepted (no nonce mapping, another token or amount,
expired, or a second transfer for a paid request) or its request failed on the destination.
What landed (the deposit row's 1337 currency and amount) goes back to the request's `refundTo`
(the sender, unless the quote named another exchange account), or with no request to the
sender, through the perps payer: signed, journalled before it is posted, re-posted
identically after a crash, and done once the exchange's ledger shows it. Then the deposit's
refund is recorded with the ledger's hash and the request, if any, moves to `refund` (its
`failReason` says why).
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from crossfill.domain.record_facts import Moved
from crossfill.kinds.payment_outcomes import Paid, Refused
from crossfill.kinds.perps.config import (
    PERPS_USDC_ADDRESS,
    PERPS_USDC_DECIMALS,
    PerpsExchangeConfig,
)
from crossfill.kinds.perps.payer import LedgerTime, PerpsPayer, PerpsPaymentOrder
from crossfill.kinds.perps.runtime import PerpsRuntime
from crossfill.store import books as ledger
from crossfill.store import deposits, requests
from crossfill.store.tables import Deposit
from crossfill.workers.due_refunds import REFUND, DueRefunds
from crossfill.workers.shown_payments import Shown

log = structlog.get_logger(__name__)


def _shown(
    config: PerpsExchangeConfig, order: PerpsPaymentOrder, credited: Paid[LedgerTime]
) -> Shown:
    """The refund as the request's record shows it: final once the ledger shows it, which has
    no blocks (`block` 0, as a fill's), at the ledger's time, paying back what landed."""
    return Shown(
        block_number=0,
        timestamp=credited.landed.seconds,
        moved=Moved(order.currency, order.amount, config.usd_value(order.currency, order.amount)),
    )


@dataclass(eq=False)
class PerpsRefunder(DueRefunds[PerpsRuntime, PerpsPayer]):
    job = "perps-refunder"

    def order_of(self, deposit: Deposit, refund_to: str | None) -> PerpsPaymentOrder | None:
        """What landed, sent back to the request's `refundTo` (its order's refund recipient)
        or, with no request, to its sender; None for a token we do not serve."""
        if deposit.currency == PERPS_USDC_ADDRESS:
            decimals = PERPS_USDC_DECIMALS
        else:
            spot = self.chain.config.spot_currency(deposit.currency)
            if spot is None:
                return None
            decimals = spot.decimals
        if int(deposit.amount) == 0:
            return None
        return PerpsPaymentOrder(
            purpose=REFUND,
            key=deposit.tx_hash,
            destination=refund_to or deposit.depositor,
            currency=deposit.currency,
            amount=int(deposit.amount),
            decimals=decimals,
        )

    async def _refund(self, deposit: Deposit) -> None:
        refund_to = None
        if deposit.request_id is not None:
            async with self.sessions() as session:
                request = await requests.get(session, deposit.request_id)
                refund_to = request.refund_to if request is not None else None
        order = self.order_of(deposit, refund_to)
        if order is None:
            log.warning("perps transfer not refundable", deposit=deposit.tx_hash,
                        currency=deposit.currency)  # fmt: skip
            await self._skip(deposit.id, deposits.UNSERVED_CURRENCY)
            return
        books = ledger.refund_books(deposit, self.chain.config.solver.address)
        outcome = await self.payer.pay(order, books)
        if isinstance(outcome, Paid):
            recorded = await self._refunded(
                deposit.id, outcome.reference, shown=_shown(self.chain.config, order, outcome)
            )
            # Every paid refund, whether or not a request records it (none for a transfer that
            # named no request, or a second deposit for one).
            log.info("perps transfer refunded", deposit_id=deposit.id, hash=outcome.reference,
                     on_request=recorded)  # fmt: skip
        elif isinstance(outcome, Refused):
            log.error("perps refund refused", deposit=deposit.tx_hash, error=outcome.reason)
            await self._skip(deposit.id, deposits.REFUND_REFUSED)
