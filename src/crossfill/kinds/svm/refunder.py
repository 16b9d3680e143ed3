"""SVM refunder: pays back, from the vault, deposits that paid for nothing.

A deposit is due when it was not accepted (no order in its memo, wrong currency, too little,
expired, or a second deposit for a paid order) or its request failed. The same currency and
amount go back to the depositor through the SVM payer (journalled, once per deposit), with a
Memo giving the reason; the request, if any, moves to `refund`.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog
from solders.pubkey import Pubkey

from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.kinds.payment_outcomes import Paid, Refused
from crossfill.kinds.svm import programs
from crossfill.kinds.svm.config import SvmCurrencyConfig
from crossfill.kinds.svm.costs import svm_refund_cost_lamports, svm_refund_worth_sending
from crossfill.kinds.svm.payer import SvmPayer
from crossfill.kinds.svm.runtime import SvmChainRuntime
from crossfill.kinds.svm.transactions import SvmPaymentOrder
from crossfill.kinds.svm.values import fee_value, moved
from crossfill.store import books as ledger
from crossfill.store import deposits, requests
from crossfill.store.tables import Deposit
from crossfill.workers.due_refunds import REFUND, DueRefunds
from crossfill.workers.shown_payments import Shown

log = structlog.get_logger(__name__)


def refund_key(deposit: Deposit) -> str:
    """One refund per deposit part: a transaction's later deposits, and the excess split off
    one, have keys of their own (the first deposit's is its signature, as it always was)."""
    key = deposit.tx_hash if deposit.log_index == 0 else f"{deposit.tx_hash}:{deposit.log_index}"
    return f"{key}:excess" if deposit.part == deposits.EXCESS else key


@dataclass(eq=False)
class SvmRefunder(DueRefunds[SvmChainRuntime, SvmPayer]):
    job = "svm-refunder"

    def order_of(self, deposit: Deposit, reason: str) -> SvmPaymentOrder:
        currency = self.chain.config.currency(deposit.currency)
        native = currency is None or currency.is_native
        return SvmPaymentOrder(
            purpose=REFUND,
            key=refund_key(deposit),
            recipient=Pubkey.from_string(deposit.depositor),
            mint=None if native else Pubkey.from_string(deposit.currency),
            amount=int(deposit.amount),
            decimals=currency.decimals if currency is not None else 9,
            memo=f"crossfill refund {reason}",
        )

    async def _refund(self, deposit: Deposit) -> None:
        reason = deposit.outcome or "UNKNOWN"
        currency = self.chain.config.currency(deposit.currency)
        if currency is None:
            # A token we do not serve: the vault may not hold it; left for the operator.
            await self._skip(deposit.id, deposits.UNSERVED_CURRENCY)
            return
        if not await self._worth_sending(deposit, currency):
            await self._skip(deposit.id, deposits.TOO_SMALL_TO_RETURN)
            return
        if deposit.outcome == DepositVerdict.ACCEPTED and deposit.request_id is not None:
            async with self.sessions() as session:
                request = await requests.get(session, deposit.request_id)
                reason = (request.fail_reason if request else None) or reason
        outcome = await self.payer.pay(
            self.order_of(deposit, reason),
            ledger.refund_books(deposit, self.chain.config.solver.address),
        )
        if isinstance(outcome, Paid):
            landed = outcome.landed
            await self._refunded(
                deposit.id,
                outcome.reference,
                shown=Shown(
                    block_number=landed.slot,
                    timestamp=landed.block_time,
                    fee=landed.fee,
                    fee_usd_micros=fee_value(self.chain.config, landed.fee),
                    moved=moved(self.chain.config, deposit.currency, int(deposit.amount)),
                ),
            )
            log.info("svm deposit refunded", deposit=deposit.tx_hash, signature=outcome.reference)
        elif isinstance(outcome, Refused):
            log.error("svm refund refused", deposit=deposit.tx_hash, error=outcome.reason)
            await self._skip(deposit.id, deposits.REFUND_REFUSED)

    async def _worth_sending(self, deposit: Deposit, currency: SvmCurrencyConfig) -> bool:
        """Paid back only when it is worth more than its refund costs the vault (the fee, and
        the rent of a token account the depositor does not have: one closed on purpose would
        make every refund of a token's dust fund a new one)."""
        new_account = not currency.is_native and not await self.chain.client.account_exists(
            programs.token_account(
                Pubkey.from_string(deposit.depositor), Pubkey.from_string(currency.address)
            )
        )
        cost = svm_refund_cost_lamports(currency, new_token_account=new_account)
        return svm_refund_worth_sending(
            int(deposit.amount), currency, self.chain.config.native_currency, cost
        )
