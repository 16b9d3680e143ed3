"""Check, at quote time, that the SVM vault can pay a quote's output: the output, the
transaction's fee and any rent, against the vault's free inventory: its balances as the
follower last read them less what the orders in flight to the chain commit
(`kinds.timed_inventory`)."""

from __future__ import annotations

from crossfill.kinds.svm.costs import svm_fill_payouts
from crossfill.kinds.svm.runtime import SvmChainRuntime
from crossfill.quoting.cross_vm import QuotedCurrency
from crossfill.quoting.payout_capacity import check_capacity


def check_svm_payout(chain: SvmChainRuntime, currency: QuotedCurrency, amount: int) -> None:
    check_capacity(
        svm_fill_payouts(chain.config, currency, amount),
        lambda payout: chain.inventory.free_now(payout.currency),
        serves=(currency, amount),
    )
