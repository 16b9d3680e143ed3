"""The books' rules for the chains off the EVM: what a deposit into a solver account earns at
its fill, what a landed SVM payment cost the vault beyond what it paid, the exchange's USDC in
its smallest units, and when the SVM indexer may not have read a deposit yet."""

from __future__ import annotations

from decimal import Decimal

import pytest
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from crossfill.domain import books
from crossfill.kinds.perps.payer import usdc_units
from crossfill.kinds.svm.books import unread_past
from crossfill.kinds.svm.client import LandedTransaction
from crossfill.kinds.svm.payer import vault_cost
from crossfill.kinds.svm.transactions import LAMPORTS_PER_SIGNATURE, SvmPaymentOrder

FEE = LAMPORTS_PER_SIGNATURE
RENT = 2_039_280  # a token account's


def _order(mint: Pubkey | None, amount: int = 10**9) -> SvmPaymentOrder:
    return SvmPaymentOrder(
        purpose="fill", key="0xrequest", recipient=Keypair().pubkey(), mint=mint,
        amount=amount, decimals=9, memo="fill",
    )  # fmt: skip


def test_a_deposit_into_a_solver_account_is_earned_at_its_fill() -> None:
    assert books.earned(7, "sol", 500) == (
        books.Posting(7, "sol", books.OWED_TO_USERS, 500),
        books.Posting(7, "sol", books.REPAID, -500),
    )


def test_a_sol_payment_costs_the_vault_its_fee_beyond_what_it_paid() -> None:
    landed = LandedTransaction(1, None, FEE, payer_spent=10**9 + FEE)
    assert vault_cost(_order(None), landed, paid=True) == FEE


def test_a_token_payment_opening_its_recipients_account_costs_the_rent_too() -> None:
    landed = LandedTransaction(1, None, FEE, payer_spent=FEE + RENT)
    assert vault_cost(_order(Keypair().pubkey(), 5_000_000), landed, paid=True) == FEE + RENT


def test_a_payment_that_landed_with_its_error_costs_its_fee_and_paid_nothing() -> None:
    landed = LandedTransaction(1, None, FEE, payer_spent=FEE)
    assert vault_cost(_order(None), landed, paid=False) == FEE


def test_without_the_vaults_balances_the_fee_is_the_cost() -> None:
    assert vault_cost(_order(None), LandedTransaction(1, None, FEE), paid=True) == FEE


@pytest.mark.parametrize(
    ("amount", "units"), [("0", 0), ("1", 1_000_000), ("0.000001", 1), ("12.5", 12_500_000)]
)
def test_the_exchanges_usdc_in_smallest_units(amount: str, units: int) -> None:
    assert usdc_units(Decimal(amount)) == units


@pytest.mark.parametrize(
    ("newest", "cursor", "unread"),
    [
        (None, None, False),  # no transaction at all: nothing to read
        (50, None, True),  # not read yet
        (50, 49, False),  # its last entry read: the cursor trails it by one
        (50, 50, False),  # a first start took the history as read
        (51, 49, True),  # a newer transaction than the indexer's
    ],
)
def test_an_address_is_unread_past_the_indexers_cursor(
    newest: int | None, cursor: int | None, unread: bool
) -> None:
    assert unread_past(newest, cursor) is unread
