"""Solver for the SVM chain: pays pending requests bound for it from the solver vault.

A request is leased, then paid through the SVM payer (journalled, once per request):
`pending` → `submitted` once the payment is sent, → `success` once it lands at the chain's
deposit commitment. A program's refusal fails the request (`EXECUTION_REVERTED`), and the
origin chain's refunder pays the deposit back; every other failure is retried. A request the
vault's inventory cannot cover waits, then is refunded (`workers.leased_fills`).
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog
from solders.pubkey import Pubkey

from crossfill.domain.inventory import Amounts
from crossfill.kinds.payment_outcomes import Paid, Refused
from crossfill.kinds.svm.client import LandedTransaction
from crossfill.kinds.svm.costs import svm_payment_needs
from crossfill.kinds.svm.payer import SvmPayer
from crossfill.kinds.svm.payments import SVM_PAYMENTS
from crossfill.kinds.svm.runtime import SvmChainRuntime
from crossfill.kinds.svm.transactions import SvmPaymentOrder
from crossfill.kinds.svm.values import fee_value, moved
from crossfill.store import books as ledger
from crossfill.store.tables import Request
from crossfill.workers.leased_fills import FILL, FillRecord, FillTransaction, LeasedFills
from crossfill.workers.shown_payments import Shown

log = structlog.get_logger(__name__)


@dataclass(eq=False)
class SvmSolver(LeasedFills[SvmChainRuntime, SvmPayer]):
    job = "svm-solver"
    shown_when_sent = True
    journal = SVM_PAYMENTS

    def needs(self, currency: str, amount: int) -> Amounts:
        return svm_payment_needs(self.chain.config, currency, amount)

    def order_of(self, request: Request) -> SvmPaymentOrder:
        currency = self.chain.config.currency(request.destination_currency)
        assert currency is not None, "quoted currencies are configured ones"
        return SvmPaymentOrder(
            purpose=FILL,
            key=request.id,
            recipient=Pubkey.from_string(request.recipient),
            mint=None if currency.is_native else Pubkey.from_string(currency.address),
            amount=int(request.amount_out),
            decimals=currency.decimals,
            memo=f"crossfill fill {request.id}",
        )

    async def _fill(self, request: Request) -> None:
        order = self.order_of(request)
        vault = self.chain.config.solver.address
        books = ledger.fill_books(
            request.id, self.chain_id, request.destination_currency, order.amount, vault
        )
        outcome = await self.payer.pay(order, books)
        if isinstance(outcome, Refused):
            log.warning("svm fill refused", request_id=request.id, error=outcome.reason)
            await self._record(request.id, FillRecord(fail_reason="EXECUTION_REVERTED"))
            return
        if isinstance(outcome, Paid):
            record = FillRecord(transaction=self._landed(request, outcome), paid=True)
        elif outcome.attempt:
            record = FillRecord(transaction=FillTransaction(outcome.attempt, "pending"))
        else:
            return
        await self._record(request.id, record)

    def _landed(self, request: Request, paid: Paid[LandedTransaction]) -> FillTransaction:
        """The fill as its landed transaction tells: slot, block time and fee, and what the
        recipient was paid."""
        config, landed = self.chain.config, paid.landed
        shown = Shown(
            block_number=landed.slot, timestamp=landed.block_time, fee=landed.fee,
            fee_usd_micros=fee_value(config, landed.fee),
            moved=moved(config, request.destination_currency, int(request.amount_out)),
        )  # fmt: skip
        return FillTransaction(paid.reference, "success", shown)
