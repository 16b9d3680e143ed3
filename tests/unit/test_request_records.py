"""Request records built from facts: what was deposited, received and refunded shows as it
happened, the quote stays the quote, and a request without facts keeps the spec's fallbacks."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import jsonschema

from crossfill.domain.record_facts import (
    DepositAddressFacts,
    Moved,
    TxFacts,
)
from crossfill.domain.request_record import v2_record, v3_record
from crossfill.quoting.response import quote_wire
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.conftest import SCHEMAS_DIR
from tests.support import quote_fixtures as fx
from tests.support.record_facts import facts_of

ORIGIN, DESTINATION = fx.CHAINS
DEPOSIT, FILL, REFUND = ("0x" + digit * 64 for digit in "def")
STRAY_TOKEN = "0x" + "99" * 20


def _wire(**fields: object) -> dict[str, Any]:
    return quote_wire(fx.quote(fx.body(**fields)), allowance=None, user_balance=None)


def _tx(kind: str, chain_id: int, tx_hash: str, moved: Moved | None, **facts: Any) -> TxFacts:
    return TxFacts(
        kind=kind,
        chain_id=chain_id,
        tx_hash=tx_hash,
        block_number=facts.get("block", 7),
        fee=facts.get("fee", "21000"),
        timestamp=facts.get("timestamp", 1_700_000_000),
        status=facts.get("status", "success"),
        moved=moved,
        fee_usd_micros=facts.get("fee_usd"),
        sender=facts.get("sender"),
    )


def _valid_v3(record: dict[str, Any]) -> dict[str, Any]:
    schema = json.loads((SCHEMAS_DIR / "requests-v3.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate({"requests": [record]})
    return record


def test_a_request_without_facts_shows_the_quote_as_its_actual_route() -> None:
    wire = _wire(destinationCurrency=NATIVE_EVM_ADDRESS)
    record = _valid_v3(v3_record(facts_of(wire, "waiting")))
    data, route = record["data"], record["data"]["route"]
    assert route["actual"] == {"rate": wire["details"]["rate"], **route["quoted"]}
    assert route["quoted"]["origin"]["inputCurrency"] == wire["details"]["currencyIn"]
    assert data["inTxs"] == data["outTxs"] == [] and data["refundCurrencyData"] is None
    payment = wire["protocol"]["v2"]["paymentDetails"]
    assert record["protocol"]["deposit"]["origin"]["amount"] == payment["amount"]
    assert record["protocol"]["deposit"]["origin"]["transactionId"] is None
    assert v2_record(facts_of(wire, "waiting"))["data"]["refundCurrencyData"] is None


def test_an_underpaid_refunded_request_shows_what_was_paid_and_paid_back() -> None:
    wire = _wire(destinationCurrency=NATIVE_EVM_ADDRESS)
    quoted_in = int(wire["details"]["currencyIn"]["amount"])
    paid, refunded = quoted_in // 2, quoted_in // 2 - 3_000
    facts = facts_of(
        wire,
        "refund",
        _tx("deposit", ORIGIN, DEPOSIT, Moved(NATIVE_EVM_ADDRESS, paid, 1_500_000_000)),
        _tx(
            "refund",
            ORIGIN,
            REFUND,
            Moved(NATIVE_EVM_ADDRESS, refunded, 1_490_000_000),
            fee="42000",
            timestamp=1_700_000_009,
            block=9,
        ),
        fail_reason="DEPOSITED_AMOUNT_TOO_LOW_TO_FILL",
    )
    record = _valid_v3(v3_record(facts))
    data = record["data"]
    actual = data["route"]["actual"]
    assert actual["origin"]["inputCurrency"] == {
        "currency": wire["details"]["currencyIn"]["currency"],
        "amount": str(paid),
        "amountFormatted": "0.5",
        "amountUsd": "1500",
        "minimumAmount": str(paid),
    }
    assert actual["origin"]["outputCurrency"] == actual["origin"]["inputCurrency"]
    assert actual["destination"]["outputCurrency"]["amount"] == "0"
    assert (
        actual["destination"]["inputCurrency"]
        == data["route"]["quoted"]["destination"]["inputCurrency"]
    )
    assert actual["rate"] == wire["details"]["rate"]  # nothing was exchanged
    assert record["protocol"]["deposit"]["origin"]["amount"] == str(paid)
    (refund_tx,) = data["outTxs"]
    assert (refund_tx["txHash"], refund_tx["fee"], refund_tx["timestamp"], refund_tx["block"]) == (
        REFUND,
        "42000",
        1_700_000_009,
        9,
    )
    assert data["refundCurrencyData"] == {
        "currency": wire["details"]["refundCurrency"]["currency"],
        "amount": str(refunded),
        "amountFormatted": "0.499999999999997",
        "amountUsd": "1490",
        "minimumAmount": str(refunded),
    }
    v2 = v2_record(facts)
    assert v2["data"]["refundCurrencyData"] == data["refundCurrencyData"]
    assert [(tx["hash"], tx["fee"]) for tx in v2["data"]["outTxs"]] == [(REFUND, "42000")]


def test_a_swap_shows_its_real_output_rate_and_venue() -> None:
    wire = _wire()
    details = wire["details"]
    deposited = int(details["currencyIn"]["amount"])
    quoted_out = int(details["currencyOut"]["amount"])
    real_out = quoted_out - 1_234_567
    assert real_out > int(details["currencyOut"]["minimumAmount"])
    facts = facts_of(
        wire,
        "success",
        _tx("deposit", ORIGIN, DEPOSIT, Moved(NATIVE_EVM_ADDRESS, deposited, None)),
        _tx("fill", DESTINATION, FILL, Moved(fx.USDC, real_out, 2_000_000)),
    )
    route = _valid_v3(v3_record(facts))["data"]["route"]
    received = route["actual"]["destination"]["outputCurrency"]
    assert received["amount"] == str(real_out)
    assert received["currency"] == details["currencyOut"]["currency"]
    assert received["amountUsd"] == "2"
    assert route["quoted"]["destination"]["outputCurrency"]["amount"] == str(quoted_out)
    # USDC per whole ETH deposited, to 18 decimals.
    rate = Decimal(real_out * 10**18 * 10**18 // (deposited * 10**6)) / 10**18
    assert Decimal(route["actual"]["rate"]) == rate
    assert route["actual"]["origin"]["inputCurrency"]["amountUsd"] == "0"  # no price then
    assert route["includedSwapSources"] == route["includedDestinationSwapSources"]
    assert route["includedDestinationSwapSources"] == ["uniswap-v2"]
    assert route["includedOriginSwapSources"] == []


def test_amounts_in_a_currency_the_quote_does_not_name_show_that_currency() -> None:
    wire = _wire(destinationCurrency=NATIVE_EVM_ADDRESS)
    usdc = {
        "chainId": ORIGIN,
        "address": fx.USDC,
        "symbol": "USDC",
        "name": "USD Coin",
        "decimals": 6,
        "metadata": {"logoURI": "", "verified": True, "isNative": False},
    }
    facts = facts_of(
        wire,
        "refund",
        _tx("deposit", ORIGIN, DEPOSIT, Moved(fx.USDC, 30_000_000, 30_000_000)),
        _tx("refund", ORIGIN, REFUND, Moved(fx.USDC, 29_900_000, 29_900_000)),
        currencies={(ORIGIN, fx.USDC): usdc},
    )
    data = _valid_v3(v3_record(facts))["data"]
    deposited = data["route"]["actual"]["origin"]["inputCurrency"]
    assert (deposited["currency"], deposited["amountFormatted"]) == (usdc, "30")
    assert data["refundCurrencyData"]["currency"] == usdc
    assert data["refundCurrencyData"]["amountFormatted"] == "29.9"

    stray = facts_of(wire, "failure", _tx("deposit", ORIGIN, DEPOSIT, Moved(STRAY_TOKEN, 5, None)))
    shown = _valid_v3(v3_record(stray))["data"]["route"]["actual"]["origin"]["inputCurrency"]
    assert shown["currency"]["address"] == STRAY_TOKEN and shown["amountFormatted"] == "5"


def test_transactions_not_mined_yet_are_notfacts_of() -> None:
    wire = _wire(destinationCurrency=NATIVE_EVM_ADDRESS)
    facts = facts_of(
        wire,
        "waiting",
        _tx("deposit", ORIGIN, DEPOSIT, Moved(NATIVE_EVM_ADDRESS, 1, None), status="pending"),
    )
    record = _valid_v3(v3_record(facts))
    assert record["data"]["inTxs"] == []
    route = record["data"]["route"]
    assert route["actual"]["origin"] == route["quoted"]["origin"]


def test_actual_fees_of_a_fill_are_its_real_gas_and_what_the_deposit_lost() -> None:
    wire = _wire(destinationCurrency=NATIVE_EVM_ADDRESS)
    deposited = int(wire["details"]["currencyIn"]["amount"])
    facts = facts_of(
        wire,
        "success",
        _tx("deposit", ORIGIN, DEPOSIT, Moved(NATIVE_EVM_ADDRESS, deposited, 3_000_000_000)),
        _tx(
            "fill",
            DESTINATION,
            FILL,
            Moved(NATIVE_EVM_ADDRESS, deposited - 10**15, 2_997_000_000),
            fee_usd=250_000,
        ),
    )
    fees = _valid_v3(v3_record(facts))["data"]["fees"]
    assert fees["actual"] == {
        "swap": {"usd": "0"},
        "execution": {"usd": "0.25"},  # the fill receipt's gas, not the quoted estimate
        "platform": {"usd": "2.75"},  # 3000 in, 2997 out, 0.25 gas
        "app": {"usd": "0"},
        "sponsored": {"usd": "0"},
    }
    assert fees["actual"]["execution"] != {"usd": fees["quoted"]["execution"]["usd"]}


def test_actual_fees_of_a_refund_are_the_refund_gas_and_nothing_charged() -> None:
    wire = _wire(destinationCurrency=NATIVE_EVM_ADDRESS)
    facts = facts_of(
        wire,
        "refund",
        _tx("deposit", ORIGIN, DEPOSIT, Moved(NATIVE_EVM_ADDRESS, 5 * 10**17, 1_500_000_000)),
        _tx(
            "refund",
            ORIGIN,
            REFUND,
            Moved(NATIVE_EVM_ADDRESS, 5 * 10**17 - 10**14, 1_499_700_000),
            fee_usd=120_000,
        ),
        fail_reason="DEPOSITED_AMOUNT_TOO_LOW_TO_FILL",
    )
    actual = _valid_v3(v3_record(facts))["data"]["fees"]["actual"]
    # The refund kept back 0.3 for its gas (its receipt paid 0.12 of it): all of it is gas,
    # none of it a fee of the service.
    assert actual["execution"] == {"usd": "0.3"}
    assert actual["platform"] == {"usd": "0"}
    assert actual["app"] == actual["sponsored"] == {"usd": "0"}


def test_actual_fees_of_an_unpriced_refund_are_its_receipts_gas() -> None:
    wire = _wire(destinationCurrency=NATIVE_EVM_ADDRESS)
    facts = facts_of(
        wire,
        "refund",
        _tx("deposit", ORIGIN, DEPOSIT, Moved(NATIVE_EVM_ADDRESS, 5 * 10**17, None)),
        _tx(
            "refund",
            ORIGIN,
            REFUND,
            Moved(NATIVE_EVM_ADDRESS, 5 * 10**17 - 10**14, None),
            fee_usd=120_000,
        ),
        fail_reason="DEPOSITED_AMOUNT_TOO_LOW_TO_FILL",
    )
    actual = _valid_v3(v3_record(facts))["data"]["fees"]["actual"]
    assert actual["execution"] == {"usd": "0.12"}
    assert actual["platform"] == {"usd": "0"}


def test_actual_fees_fall_back_to_the_quote_without_prices_and_wait_for_the_end() -> None:
    wire = _wire(destinationCurrency=NATIVE_EVM_ADDRESS)
    deposited = int(wire["details"]["currencyIn"]["amount"])
    deposit = _tx("deposit", ORIGIN, DEPOSIT, Moved(NATIVE_EVM_ADDRESS, deposited, None))
    fill = _tx("fill", DESTINATION, FILL, Moved(NATIVE_EVM_ADDRESS, 1, None))
    quoted = wire["fees"]
    actual = v3_record(facts_of(wire, "success", deposit, fill))["data"]["fees"]["actual"]
    assert actual["execution"] == {"usd": quoted["relayerGas"]["amountUsd"]}
    assert actual["platform"] == {"usd": quoted["relayerService"]["amountUsd"]}
    for status in ("waiting", "pending", "submitted", "failure"):
        assert v3_record(facts_of(wire, status, deposit))["data"]["fees"]["actual"] is None


def test_the_depositor_is_who_paid_the_deposit_not_the_quoting_user() -> None:
    wire = _wire(destinationCurrency=NATIVE_EVM_ADDRESS)
    payer = "0x" + "5e" * 20
    paid = _tx("deposit", ORIGIN, DEPOSIT, Moved(NATIVE_EVM_ADDRESS, 1, None), sender=payer)
    record = _valid_v3(v3_record(facts_of(wire, "pending", paid)))
    assert record["protocol"]["deposit"]["origin"]["depositor"] == payer
    assert record["user"] == fx.USER != payer
    unpaid = _valid_v3(v3_record(facts_of(wire, "waiting")))
    assert unpaid["protocol"]["deposit"]["origin"]["depositor"] == fx.USER


def test_a_deposit_address_request_shows_its_address_in_both_versions() -> None:
    paid_at = DepositAddressFacts(
        address="0x" + "da" * 20,
        type="open",
        depositor=fx.USER,
        deposit_tx_hash=DEPOSIT,
        recovery_address="0x" + "cd" * 20,
    )
    facts = facts_of(_wire(), "waiting", deposit_address=paid_at)
    assert _valid_v3(v3_record(facts))["depositAddress"] == {
        "address": paid_at.address,
        "type": "open",
        "depositor": fx.USER,
        "depositTxHash": DEPOSIT,
        "recoveryAddress": paid_at.recovery_address,
    }
    assert v2_record(facts)["depositAddress"] == {
        "address": paid_at.address,
        "depositAddressType": "open",
        "depositor": fx.USER,
        "depositTxHash": DEPOSIT,
    }
    assert v3_record(facts_of(_wire(), "waiting"))["depositAddress"] is None
