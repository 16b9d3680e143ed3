"""Check, at quote time, that an EVM solver paying a cross-VM quote's output can pay it, from
its free inventory there: its balances as the chain's follower last read them less what orders
in flight are committed to (`domain.inventory`, `quoting.payout_capacity`); each other
kind checks its own side (`kinds.<kind>.payout`)."""

from __future__ import annotations

from crossfill.kinds.evm.chain import evm_chains
from crossfill.quoting.cross_vm import QuotedCurrency
from crossfill.quoting.payout_capacity import check_capacity, evm_fill_payouts
from crossfill.runtime import Runtime
from crossfill.types import ChainId


def check_evm_payout(runtime: Runtime, currency: QuotedCurrency, amount: int) -> None:
    """The EVM solver pays `amount` of `currency` and the fill's gas (as EVM quotes count it)."""
    chain = evm_chains(runtime)[ChainId(currency.chain_id)]
    max_fee_per_gas, _tip = chain.state.offered_fees()
    check_capacity(
        evm_fill_payouts(chain.config, currency, amount, max_fee_per_gas),
        lambda payout: chain.state.solver_free(payout.currency),
        serves=(currency, amount),
    )
