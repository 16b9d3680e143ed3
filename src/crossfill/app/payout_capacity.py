"""Check, at quote time, that the side paying a cross-VM quote's output can pay it, from the
solver's live balances there (`quoting.payout_capacity`): an EVM chain's and the SVM chain's
as their followers last read them, the perps exchange's as read for quotes
(`chains.perps_inventory`)."""

from __future__ import annotations

from crossfill.errors import ChainError
from crossfill.kinds.svm.quote import QuotedCurrency
from crossfill.quoting.errors import QuoteUnavailable
from crossfill.quoting.payout_capacity import (
    check_capacity,
    evm_fill_payouts,
    exchange_payouts,
    svm_fill_payouts,
)
from crossfill.runtime import Runtime
from crossfill.types import ChainId


def check_evm_payout(runtime: Runtime, currency: QuotedCurrency, amount: int) -> None:
    """The EVM solver pays `amount` of `currency` and the fill's gas (as EVM quotes count it)."""
    chain = runtime.chains[ChainId(currency.chain_id)]
    max_fee_per_gas, _tip = chain.state.offered_fees()
    check_capacity(
        evm_fill_payouts(chain.config, currency, amount, max_fee_per_gas),
        lambda payout: chain.state.solver_balance(payout.currency),
    )


def check_svm_payout(runtime: Runtime, currency: QuotedCurrency, amount: int) -> None:
    """The SVM vault pays `amount` of `currency`, the transaction's fee and any rent."""
    chain = runtime.svm_chains[ChainId(currency.chain_id)]
    check_capacity(
        svm_fill_payouts(chain.config, currency, amount),
        lambda payout: chain.state.solver_balances.get(payout.currency),
    )


async def check_exchange_payout(runtime: Runtime, currency: QuotedCurrency, amount: int) -> None:
    """The solver's exchange account pays `amount` of `currency`. A currency on a third-party
    DEX is not checked (its balance is not among the exchange's reads): the exchange's refusal
    of the transfer fails the request and the deposit is refunded."""
    assert runtime.perps is not None
    try:
        balance = await runtime.perps.inventory.balance(currency.address)
    except ChainError as exc:
        raise QuoteUnavailable(
            "SERVICE_UNAVAILABLE", f"solver inventory on chain {currency.chain_id} unknown: {exc}"
        ) from None
    if balance is not None:
        check_capacity(exchange_payouts(currency, amount), lambda _payout: balance)
