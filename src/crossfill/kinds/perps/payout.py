"""Check, at quote time, that the solver's exchange account can pay a quote's output, from its
free inventory there: its balances as read for quotes less what the orders in flight to the
exchange commit (`kinds.perps.inventory`); the exchange charges nothing more."""

from __future__ import annotations

from crossfill.errors import ChainError
from crossfill.kinds.perps.runtime import PerpsRuntime
from crossfill.quoting.cross_vm import QuotedCurrency
from crossfill.quoting.errors import QuoteUnavailable
from crossfill.quoting.payout_capacity import Payout, check_capacity, output


def exchange_payouts(currency: QuotedCurrency, amount: int) -> tuple[Payout, ...]:
    """A transfer from the solver's exchange account: the output (the exchange charges none)."""
    return (output(currency, amount),)


async def check_exchange_payout(
    exchange: PerpsRuntime, currency: QuotedCurrency, amount: int
) -> None:
    """A currency on a third-party DEX is not checked (its balance is not among the exchange's
    reads): the exchange's refusal of the transfer fails the request and the deposit is
    refunded."""
    try:
        free = await exchange.inventory.free(currency.address)
    except ChainError as exc:
        raise QuoteUnavailable(
            "SERVICE_UNAVAILABLE", f"solver inventory on chain {currency.chain_id} unknown: {exc}"
        ) from None
    if free is not None:
        check_capacity(
            exchange_payouts(currency, amount), lambda _payout: free, serves=(currency, amount)
        )
