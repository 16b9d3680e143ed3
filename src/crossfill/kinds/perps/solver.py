"""Solver for the perps exchange: pays pending requests bound for it from the solver's
exchange account.

A request is leased, then paid through the perps payer (journalled, once per request):
`pending` → `submitted` once the signed transfer is journalled and posted, → `success` once
the exchange's ledger shows the credit (the fill's `outTxs` entry carries the ledger's hash).
A request the account's inventory cannot cover waits, then is refunded with
`SOLVER_CAPACITY_EXCEEDED` (`workers.leased_fills`), before anything is posted. A refusal by the
exchange fails the request (`SOLVER_BALANCE_TOO_LOW` when the solver's account cannot cover
it, else `TRANSFER_FAILED`), and the origin chain's refunder pays the deposit back; every other
failure is retried.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from crossfill.domain.inventory import Amounts
from crossfill.domain.record_facts import Moved
from crossfill.errors import ChainError
from crossfill.kinds.payment_outcomes import Paid, Refused
from crossfill.kinds.perps.config import PERPS_USDC_DECIMALS
from crossfill.kinds.perps.payer import PerpsPayer, PerpsPaymentOrder, PerpsPaymentOutcome
from crossfill.kinds.perps.payments import PERPS_PAYMENTS
from crossfill.kinds.perps.runtime import PerpsRuntime
from crossfill.store import books as ledger
from crossfill.store.tables import Request
from crossfill.workers.leased_fills import FILL, FillRecord, FillTransaction, LeasedFills
from crossfill.workers.shown_payments import Shown

log = structlog.get_logger(__name__)


def fail_reason(refusal: str) -> str:
    if "insufficient balance" in refusal.lower():
        return "SOLVER_BALANCE_TOO_LOW"
    return "TRANSFER_FAILED"


@dataclass(eq=False)
class PerpsSolver(LeasedFills[PerpsRuntime, PerpsPayer]):
    job = "perps-solver"
    shown_when_sent = False
    journal = PERPS_PAYMENTS

    def needs(self, currency: str, amount: int) -> Amounts:
        """A transfer from the solver's exchange account takes its output (the exchange
        charges none)."""
        return {currency.lower(): amount}

    def order_of(self, request: Request) -> PerpsPaymentOrder:
        currency = request.destination_currency
        spot = self.chain.config.spot_currency(currency)
        return PerpsPaymentOrder(
            purpose=FILL,
            key=request.id,
            destination=request.recipient,
            currency=currency,
            amount=int(request.amount_out),
            decimals=spot.decimals if spot is not None else PERPS_USDC_DECIMALS,
        )

    async def _fill(self, request: Request) -> None:
        order = self.order_of(request)
        books = ledger.fill_books(
            request.id,
            self.chain_id,
            order.currency,
            order.amount,
            self.chain.config.solver.address,
        )
        try:
            outcome = await self.payer.pay(order, books)
        except ChainError as exc:
            self.chain.state.last_error = str(exc)
            raise
        self.chain.state.last_error = None
        await self._record(request.id, self._record_of(request, outcome))

    def _moved(self, currency: str, amount: int) -> Moved:
        return Moved(currency, amount, self.chain.config.usd_value(currency, amount))

    def _record_of(self, request: Request, outcome: PerpsPaymentOutcome) -> FillRecord:
        if isinstance(outcome, Refused):
            log.warning("perps fill refused", request_id=request.id, reason=outcome.reason)
            return FillRecord(fail_reason=fail_reason(str(outcome.reason)))
        if not isinstance(outcome, Paid):
            return FillRecord()
        # The exchange has no blocks: `block` 0, the ledger's time as the timestamp.
        shown = Shown(
            block_number=0, timestamp=outcome.landed.seconds,
            moved=self._moved(request.destination_currency, int(request.amount_out)),
        )  # fmt: skip
        transaction = FillTransaction(outcome.reference, "success", shown)
        return FillRecord(transaction=transaction, paid=True)
