"""Check, at quote time, that the SVM vault can pay a quote's output: the output, the
transaction's fee and any rent, against the vault's balances as the follower last read them."""

from __future__ import annotations

from crossfill.kinds.svm.costs import svm_fill_payouts
from crossfill.kinds.svm.runtime import SvmChainRuntime
from crossfill.quoting.cross_vm import QuotedCurrency
from crossfill.quoting.payout_capacity import check_capacity


def check_svm_payout(chain: SvmChainRuntime, currency: QuotedCurrency, amount: int) -> None:
    check_capacity(
        svm_fill_payouts(chain.config, currency, amount),
        lambda payout: chain.state.solver_balances.get(payout.currency),
    )
