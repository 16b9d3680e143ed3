"""What a cross-VM quote's paying side must hold (the output plus what paying it costs there),
the refusal when it holds less, and the solver's exchange balances read for quotes at most
once per interval."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from crossfill.domain.gas import with_gas_headroom
from crossfill.errors import ChainUnreachable
from crossfill.kinds.perps.client import ClearinghouseState, SpotBalance
from crossfill.kinds.perps.config import PERPS_USDC_ADDRESS
from crossfill.kinds.perps.inventory import PerpsInventory
from crossfill.kinds.svm.costs import TOKEN_ACCOUNT_RENT_LAMPORTS, svm_fill_payouts
from crossfill.kinds.svm.transactions import LAMPORTS_PER_SIGNATURE
from crossfill.quoting.cross_vm import QuotedCurrency
from crossfill.quoting.errors import QuoteError, QuoteUnavailable
from crossfill.quoting.payout_capacity import Payout, check_capacity, evm_fill_payouts
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.unit.test_perps_quotes import EVM, EVM_USDC, HYPE_ID, PERPS
from tests.unit.test_svm_quotes import SVM, USDC_MINT

GWEI = 10**9


def _currency(chain_id: int, address: str, symbol: str, *, native: bool) -> QuotedCurrency:
    return QuotedCurrency(
        chain_id, "chain", address, symbol, symbol, 6, native, "", Decimal(1)
    )  # fmt: skip


def test_an_evm_fill_of_ether_needs_the_output_and_its_gas_in_ether() -> None:
    ether = _currency(EVM.id, NATIVE_EVM_ADDRESS, "ETH", native=True)
    (payout,) = evm_fill_payouts(EVM, ether, 10**18, GWEI)
    assert payout.amount == 10**18 + with_gas_headroom(EVM.fees.fill_gas_native) * GWEI


def test_an_evm_fill_of_a_token_needs_the_token_and_ether_for_its_gas() -> None:
    usdc = _currency(EVM.id, EVM_USDC.lower(), "USDC", native=False)
    token, gas = evm_fill_payouts(EVM, usdc, 5 * 10**6, GWEI)
    assert (token.currency, token.amount) == (EVM_USDC.lower(), 5 * 10**6)
    assert gas.currency == NATIVE_EVM_ADDRESS
    assert gas.amount == with_gas_headroom(EVM.fees.fill_gas_erc20) * GWEI


def test_an_svm_payment_needs_its_fee_and_for_a_token_the_token_accounts_rent() -> None:
    sol = _currency(SVM.id, "1" * 32, "SOL", native=True)
    (payout,) = svm_fill_payouts(SVM, sol, 10**9)
    assert payout.amount == 10**9 + LAMPORTS_PER_SIGNATURE
    usdc = _currency(SVM.id, USDC_MINT, "USDC", native=False)
    token, lamports = svm_fill_payouts(SVM, usdc, 10**6)
    assert (token.currency, token.amount) == (USDC_MINT, 10**6)
    assert lamports.amount == LAMPORTS_PER_SIGNATURE + TOKEN_ACCOUNT_RENT_LAMPORTS


def test_a_balance_short_by_one_unit_is_insufficient_liquidity_and_an_exact_one_pays() -> None:
    payout = Payout(7, "0xabc", "TOK", 100)
    check_capacity([payout], lambda _p: 100)
    with pytest.raises(QuoteError) as refused:
        check_capacity([payout], lambda _p: 99)
    assert refused.value.error_code == "INSUFFICIENT_LIQUIDITY"
    assert "TOK" in str(refused.value) and "chain 7" in str(refused.value)


def test_a_refusal_names_the_output_that_could_be_served_less_what_else_paying_takes() -> None:
    sol = _currency(SVM.id, "1" * 32, "SOL", native=True)
    payouts = svm_fill_payouts(SVM, sol, 10**9)
    free = 6 * 10**8
    with pytest.raises(QuoteError) as refused:
        check_capacity(payouts, lambda _p: free, serves=(sol, 10**9))
    servable = free - LAMPORTS_PER_SIGNATURE
    assert f"({servable} in smallest units) can be served now" in str(refused.value)
    # Short of another currency than the output's: nothing can be served.
    usdc = _currency(SVM.id, USDC_MINT, "USDC", native=False)
    balances = {USDC_MINT: 10**9, "1" * 32: 0}
    with pytest.raises(QuoteError) as short:
        check_capacity(
            svm_fill_payouts(SVM, usdc, 10**6),
            lambda p: balances[p.currency],
            serves=(usdc, 10**6),
        )
    assert "at most 0 USDC (0 in smallest units)" in str(short.value)


def test_a_balance_not_read_yet_is_503() -> None:
    with pytest.raises(QuoteUnavailable):
        check_capacity([Payout(7, "0xabc", "TOK", 1)], lambda _p: None)


class _Exchange:
    """The two reads the inventory makes, counted; unreachable on demand."""

    def __init__(self) -> None:
        self.withdrawable = Decimal("1000.5")
        self.reads = 0
        self.reachable = True

    async def clearinghouse_state(self, user: str) -> ClearinghouseState:
        self.reads += 1
        if not self.reachable:
            raise ChainUnreachable("exchange: ConnectError")
        return ClearinghouseState(self.withdrawable, self.withdrawable)

    async def spot_balances(self, user: str) -> list[SpotBalance]:
        self.reads += 1
        return [SpotBalance("HYPE", 150, Decimal("12.5"), Decimal("2.25"))]


def _inventory(exchange: _Exchange, now: list[float]) -> PerpsInventory:
    return PerpsInventory(exchange, PERPS, lambda: now[0])  # type: ignore[arg-type]


def test_the_exchange_is_read_once_per_interval_however_many_quotes_ask() -> None:
    exchange, now = _Exchange(), [100.0]
    inventory = _inventory(exchange, now)

    async def quotes() -> None:
        asked = (inventory.balance(PERPS_USDC_ADDRESS) for _ in range(5))
        assert await asyncio.gather(*asked) == [1_000_500_000] * 5
        assert exchange.reads == 1
        exchange.withdrawable = Decimal(3)
        now[0] += PERPS.poll_interval_seconds
        assert await inventory.balance(PERPS_USDC_ADDRESS) == 3_000_000
        assert exchange.reads == 2

    asyncio.run(quotes())


def test_a_spot_token_is_its_free_balance_and_a_third_party_dex_is_not_read() -> None:
    exchange = _Exchange()
    inventory = _inventory(exchange, [0.0])
    assert asyncio.run(inventory.balance(HYPE_ID)) == 1_025_000_000  # (12.5 - 2.25) * 10**8
    assert asyncio.run(inventory.balance(HYPE_ID + b"xyz".hex())) is None
    assert exchange.reads == 1


def test_an_unreachable_exchange_raises_and_is_asked_again_next_time() -> None:
    exchange = _Exchange()
    exchange.reachable = False
    inventory = _inventory(exchange, [0.0])

    async def quotes() -> None:
        with pytest.raises(ChainUnreachable):
            await inventory.balance(PERPS_USDC_ADDRESS)
        exchange.reachable = True
        assert await inventory.balance(PERPS_USDC_ADDRESS) == 1_000_500_000

    asyncio.run(quotes())
