"""Whether the side that pays a quote's output can pay it (pure): the output, plus what paying
it costs that side (an EVM fill's gas here; each kind's own costs with the kind), per
currency, against the solver's balances there. The quotes of every route whose output is paid
by another kind of chain than its input's (to and from the SVM chain, to and from the perps
exchange) are checked this way, so a deposit is never taken for a fill that cannot be paid.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from crossfill.domain.gas import with_gas_headroom
from crossfill.domain.money import format_units
from crossfill.kinds.evm.config import ChainConfig
from crossfill.quoting.cross_vm import QuotedCurrency
from crossfill.quoting.errors import QuoteError, QuoteUnavailable


@dataclass(frozen=True)
class Payout:
    """An amount of one currency the solver must hold on `chain_id` to pay a fill."""

    chain_id: int
    # The currency's address as that chain's balances are keyed (EVM lower-case, base58 as is).
    currency: str
    symbol: str
    amount: int


def merged(payouts: Iterable[Payout]) -> tuple[Payout, ...]:
    """One payout per currency (the output and a cost in the same currency added up)."""
    totals: dict[str, Payout] = {}
    for payout in payouts:
        held = totals.get(payout.currency)
        amount = payout.amount + (held.amount if held is not None else 0)
        totals[payout.currency] = Payout(payout.chain_id, payout.currency, payout.symbol, amount)
    return tuple(totals.values())


def output(currency: QuotedCurrency, amount: int) -> Payout:
    return Payout(currency.chain_id, currency.address, currency.symbol, amount)


def evm_fill_payouts(
    chain: ChainConfig, currency: QuotedCurrency, amount: int, max_fee_per_gas: int
) -> tuple[Payout, ...]:
    """An EVM fill paying `amount` of `currency`: the output, and the fill's gas in the gas
    currency as EVM quotes count it: its budget with the head-room a fill is sent with, at the
    highest fee it offers (`max_fee_per_gas`, what a node checks the balance against)."""
    fees = chain.fees
    gas = with_gas_headroom(fees.fill_gas_native if currency.is_native else fees.fill_gas_erc20)
    native = chain.native_currency
    cost = Payout(chain.id, native.address.lower(), native.symbol, gas * max_fee_per_gas)
    return merged((output(currency, amount), cost))


def check_capacity(
    payouts: Iterable[Payout],
    balance_of: Callable[[Payout], int | None],
    *,
    serves: tuple[QuotedCurrency, int] | None = None,
) -> None:
    """`INSUFFICIENT_LIQUIDITY` when a balance (the solver's free inventory) is short of its
    payout; 503 while a balance is not known yet (`balance_of` answers None). `serves`: the
    output and its amount, whose largest servable amount the refusal names (the free
    inventory of its currency less what else paying takes of it; 0 when another currency is
    short)."""
    for payout in payouts:
        balance = balance_of(payout)
        if balance is None:
            raise QuoteUnavailable(
                "SERVICE_UNAVAILABLE", f"solver inventory on chain {payout.chain_id} not known yet"
            )
        if balance < payout.amount:
            if serves is None:
                raise QuoteError(
                    "INSUFFICIENT_LIQUIDITY",
                    f"the solver holds too little {payout.symbol} on chain {payout.chain_id}",
                )
            currency, amount = serves
            others = payout.amount - amount
            servable = max(0, balance - others) if payout.currency == currency.address else 0
            raise QuoteError(
                "INSUFFICIENT_LIQUIDITY",
                f"the solver's free inventory on chain {payout.chain_id} cannot cover this "
                f"order: at most {format_units(servable, currency.decimals)} {currency.symbol} "
                f"({servable} in smallest units) can be served now",
            )
