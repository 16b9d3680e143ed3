"""What paying from the SVM vault costs it, in lamports (pure): a fill's or a refund's
transaction fee, and the rent of a recipient's token account the vault funds; and whether a
refund is worth that cost."""

from __future__ import annotations

from fractions import Fraction

from crossfill.domain.inventory import Amounts
from crossfill.kinds.svm.config import SvmChainConfig, SvmCurrencyConfig
from crossfill.kinds.svm.transactions import LAMPORTS_PER_SIGNATURE
from crossfill.quoting.cross_vm import QuotedCurrency
from crossfill.quoting.payout_capacity import Payout, merged, output

# The rent-exempt minimum of an SPL token account (165 bytes of data): the payer funds the
# recipient's associated token account when it does not exist yet, which a quote cannot know.
TOKEN_ACCOUNT_RENT_LAMPORTS = 2_039_280


def svm_payment_fee_lamports(*, native: bool) -> int:
    """What a payment from the vault costs it in SOL beyond its output: the transaction's
    signature fee, and for a token the recipient's token account's rent."""
    return LAMPORTS_PER_SIGNATURE + (0 if native else TOKEN_ACCOUNT_RENT_LAMPORTS)


def svm_fill_payouts(
    chain: SvmChainConfig, currency: QuotedCurrency, amount: int
) -> tuple[Payout, ...]:
    """An SVM payment of `amount` of `currency` from the vault: the output and its fee."""
    sol = chain.native_currency
    fee = svm_payment_fee_lamports(native=currency.is_native)
    return merged((output(currency, amount), Payout(chain.id, sol.address, sol.symbol, fee)))


def svm_payment_needs(chain: SvmChainConfig, currency: str, amount: int) -> Amounts:
    """What paying `amount` of the configured `currency` takes of the vault, by address: the
    output and its fee."""
    sol = chain.native_currency.address
    needs = {currency: amount}
    needs[sol] = needs.get(sol, 0) + svm_payment_fee_lamports(native=currency == sol)
    return needs


def svm_refund_cost_lamports(currency: SvmCurrencyConfig, *, new_token_account: bool) -> int:
    """What paying a deposit of `currency` back costs the SVM vault: the transaction's fee, and
    for a token whose recipient has no account for it (closed, perhaps on purpose), that
    account's rent, which the vault funds."""
    rent = TOKEN_ACCOUNT_RENT_LAMPORTS if new_token_account and not currency.is_native else 0
    return LAMPORTS_PER_SIGNATURE + rent


def svm_refund_worth_sending(
    amount: int, currency: SvmCurrencyConfig, sol: SvmCurrencyConfig, cost_lamports: int
) -> bool:
    """Whether `amount` of `currency` is worth more than its refund costs in SOL (at the
    configured prices): dust is kept, never paid back at the vault's loss. A token without a
    price is worth sending only when the refund costs no more than its fee."""
    if currency.is_native:
        return amount > cost_lamports
    if currency.usd_price is None or sol.usd_price is None:
        return cost_lamports <= LAMPORTS_PER_SIGNATURE
    value = Fraction(amount, 10**currency.decimals) * Fraction(currency.usd_price)
    cost = Fraction(cost_lamports, 10**sol.decimals) * Fraction(sol.usd_price)
    return value > cost
