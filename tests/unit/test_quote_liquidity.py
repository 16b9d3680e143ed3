"""The destination liquidity a quote checks: the solver's inventory pays the fill's output and
its gas (what a node checks the balance against), or the quote is refused."""

from __future__ import annotations

import pytest

from crossfill.domain.gas import with_gas_headroom
from crossfill.kinds.evm.config import evm_chains
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteRequest
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support import quote_fixtures as fx

DESTINATION = fx.CHAINS[1]


def _native_bridge() -> tuple[QuoteRequest, int, int]:
    """A native bridge's body, its output, and the gas its fill may cost at most."""
    config = fx.deployment()
    chain_views = fx.views(config)
    quote_body = fx.body(destinationCurrency=NATIVE_EVM_ADDRESS)
    output = fx.quote(quote_body, config, chain_views).amount_out
    destination = chain_views[DESTINATION]
    max_fee, _tip = destination.state.offered_fees()
    gas = with_gas_headroom(destination.config.fees.fill_gas_native) * max_fee
    return quote_body, output, gas


@pytest.mark.parametrize("short_by", [1, 10**9])
def test_an_inventory_that_pays_the_output_but_not_the_gas_is_refused(short_by: int) -> None:
    quote_body, output, gas = _native_bridge()
    config = fx.deployment()
    chain_views = fx.views(config)
    chain_views[DESTINATION].state.solver_balances[NATIVE_EVM_ADDRESS] = output + gas - short_by
    with pytest.raises(QuoteError) as refused:
        fx.quote(quote_body, config, chain_views)
    assert refused.value.error_code == "INSUFFICIENT_LIQUIDITY"


def test_an_inventory_that_pays_the_output_and_the_gas_is_quoted() -> None:
    quote_body, output, gas = _native_bridge()
    config = fx.deployment()
    chain_views = fx.views(config)
    chain_views[DESTINATION].state.solver_balances[NATIVE_EVM_ADDRESS] = output + gas
    assert fx.quote(quote_body, config, chain_views).amount_out == output


def test_a_token_fill_needs_gas_currency_for_its_gas() -> None:
    config = fx.deployment()
    chain_views = fx.views(config)
    chain_views[DESTINATION].state.solver_balances[NATIVE_EVM_ADDRESS] = 0
    with pytest.raises(QuoteError) as refused:
        fx.quote(fx.body(originCurrency=fx.USDC, amount=str(10**9)), config, chain_views)
    assert refused.value.error_code == "INSUFFICIENT_LIQUIDITY"


def test_outputs_committed_to_orders_in_flight_are_not_quoted_again() -> None:
    """The balance covers the order, but not beside what orders in flight are committed to:
    refused, with the output that could be served (the free inventory less the fill's gas)."""
    quote_body, output, gas = _native_bridge()
    config = fx.deployment()
    chain_views = fx.views(config)
    state = chain_views[DESTINATION].state
    state.solver_balances[NATIVE_EVM_ADDRESS] = 10 * output
    state.solver_committed[NATIVE_EVM_ADDRESS] = 9 * output - gas + 5
    with pytest.raises(QuoteError) as refused:
        fx.quote(quote_body, config, chain_views)
    assert refused.value.error_code == "INSUFFICIENT_LIQUIDITY"
    servable = output - 5  # free (output + gas - 5) less the gas
    assert f"({servable} in smallest units) can be served now" in refused.value.message
    state.solver_committed[NATIVE_EVM_ADDRESS] = 9 * output - gas
    assert fx.quote(quote_body, config, chain_views).amount_out == output


def test_a_token_short_of_free_inventory_names_the_token_amount_servable() -> None:
    config = fx.deployment()
    chain_views = fx.views(config)
    state = chain_views[DESTINATION].state
    usdc = next(c for c in evm_chains(config)[1].erc20_currencies if c.symbol == "USDC")
    state.solver_balances[usdc.address.lower()] = 5 * 10**6
    state.solver_committed[usdc.address.lower()] = 3 * 10**6
    body = fx.body(originCurrency=fx.USDC, destinationCurrency=usdc.address, amount=str(10**7))
    with pytest.raises(QuoteError) as refused:
        fx.quote(body, config, chain_views)
    assert "at most 2 USDC (2000000 in smallest units)" in refused.value.message
