"""The quote's wire answer: its amounts, built once per answer, read as if each were built alone."""

from __future__ import annotations

import orjson

from crossfill.quoting.engine import Quote
from crossfill.quoting.response import amount_wire, price_wire, quote_wire
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support import quote_fixtures as fixtures


def _usdc_bridge(amount: int) -> Quote:
    return fixtures.quote(
        fixtures.body(
            originCurrency=fixtures.USDC,
            destinationCurrency=fixtures.USDC,
            amount=str(amount),
            appFees=[{"recipient": "0x" + "66" * 20, "fee": "50"}],
        )
    )


def test_every_amount_is_what_amount_wire_makes_of_it() -> None:
    quote = _usdc_bridge(1_000 * 10**6)
    wire = quote_wire(quote, allowance=0, user_balance=7, order_signature=None)

    def wired(amount: int) -> dict[str, object]:
        return amount_wire(quote.origin, quote.currency_in, amount, quote.in_usd(amount))

    fees = wire["fees"]
    assert fees["relayer"] == wired(quote.split.relayer)
    assert fees["relayerGas"] == wired(quote.split.relayer_gas)
    assert fees["app"] == wired(quote.split.app_total)
    assert fees["subsidized"] == wired(0)
    native = quote.origin.native_currency
    assert fees["gas"] == amount_wire(
        quote.origin,
        native,
        quote.deposit_gas_wei,
        quote.usd_micros(quote.origin, native, quote.deposit_gas_wei),
    )
    details = wire["details"]
    assert details["currencyIn"] == wired(quote.split.amount_in)
    assert details["currencyOut"] == amount_wire(
        quote.destination,
        quote.currency_out,
        quote.amount_out,
        quote.out_usd(quote.amount_out),
        quote.minimum_out,
    )
    sponsorship = wire["feeSponsorship"]["quoted"]
    assert sponsorship["sponsoredTotal"] == wired(0)
    assert sponsorship["userPaysTotal"] == wired(quote.split.relayer + quote.split.app_total)


def test_nothing_is_shared_across_answers() -> None:
    """A wired amount is shared within one answer only: another answer, of the same quote or of
    another currency and price, is built afresh and changes nothing already answered."""
    first = _usdc_bridge(1_000 * 10**6)
    answer = quote_wire(first, allowance=0, user_balance=None, order_signature=None)
    encoded = orjson.dumps(answer)

    again = quote_wire(first, allowance=0, user_balance=None, order_signature=None)
    assert again["fees"]["subsidized"] is not answer["fees"]["subsidized"]
    assert (
        again["details"]["currencyIn"]["currency"]
        is not (answer["details"]["currencyIn"]["currency"])
    )
    other = fixtures.quote(fixtures.body(originCurrency=NATIVE_EVM_ADDRESS))
    other_answer = price_wire(other, user_balance=None)
    assert other_answer["fees"]["subsidized"]["currency"]["address"] == NATIVE_EVM_ADDRESS
    assert orjson.dumps(answer) == encoded
