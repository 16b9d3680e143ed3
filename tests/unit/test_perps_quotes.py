"""Planning a deposit to the perps exchange: amounts at the quoted prices less the service fee,
the currency addresses of 1337 (perps USDC, spot tokens by id, the DEX suffix), the protocol
order, and the input rules."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import jsonschema
import pytest

from crossfill.domain.order import ORDER_HASHER
from crossfill.kinds.evm.config import evm_chains
from crossfill.kinds.perps.config import PERPS_USDC_ADDRESS, PerpsExchangeConfig
from crossfill.kinds.perps.quote import PerpsQuoteContext, perps_currency, plan_perps_deposit
from crossfill.kinds.perps.response import perps_deposit_wire
from crossfill.quoting.cross_vm import QuoteStamp
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteRequest
from tests.conftest import SCHEMAS_DIR
from tests.unit.deployment_samples import SOLVER, sample_deployment

EVM = evm_chains(sample_deployment())[0]
EVM_USDC = next(c.address for c in EVM.erc20_currencies if c.symbol == "USDC")
HYPE_ID = "0x0d01dc56dcaaca66ad901c959b4011ec"
PERPS = PerpsExchangeConfig.model_validate(
    {
        "api_url": "http://127.0.0.1:9000", "exchange_chain": "Testnet",
        "solver": {"address": SOLVER, "key": "devnet:1"},
        "spot_currencies": [
            {"token_id": HYPE_ID, "exchange_name": "HYPE", "symbol": "HYPE", "name": "Hype",
             "decimals": 8, "usd_price": "25", "supports_bridging": True},
            {"token_id": HYPE_ID, "exchange_name": "HYPE", "symbol": "xHYPE", "name": "Hype on xyz",
             "decimals": 8, "usd_price": "25", "dex": "xyz"},
        ],
    }
)  # fmt: skip
RECIPIENT = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc"


def _context() -> PerpsQuoteContext:
    return PerpsQuoteContext(
        evm=EVM, perps=PERPS, evm_price=Decimal(1),
        stamp=QuoteStamp(now=datetime(2026, 11, 23, tzinfo=UTC), ttl=timedelta(minutes=5),
                         request_id=b"\x01" * 32, salt=7, solver=SOLVER),
    )  # fmt: skip


def _to_perps(**changes: Any) -> QuoteRequest:
    fields: dict[str, Any] = {
        "user": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "origin_chain_id": EVM.id,
        "destination_chain_id": 1337, "origin_currency": EVM_USDC,
        "destination_currency": PERPS_USDC_ADDRESS, "amount": "10000000",
        "trade_type": "EXACT_INPUT", "recipient": RECIPIENT,
    }  # fmt: skip
    fields.update(changes)
    return QuoteRequest(**fields)


def test_usdc_to_perps_usdc_is_a_bridge_less_the_service_fee() -> None:
    quote = plan_perps_deposit(_to_perps(), _context())
    fee = 10_000_000 * EVM.fees.service_fee_bps // 10_000
    assert quote.terms.amount_out == 10_000_000 - fee  # both sides 6 decimals, both $1
    assert quote.terms.service_fee == fee
    assert quote.request_type == "Bridge"
    assert quote.terms.currency_out.address == PERPS_USDC_ADDRESS
    assert quote.terms.currency_out.decimals == 6
    assert quote.terms.recipient == RECIPIENT


def test_the_order_id_is_the_orders_hash_and_pays_the_recipient_on_1337() -> None:
    quote = plan_perps_deposit(_to_perps(), _context())
    assert (
        quote.order_id
        == "0x" + ORDER_HASHER.hash_struct("Order", quote.order.typed_message()).hex()
    )
    wire = perps_deposit_wire(quote, EVM)
    order_data = wire["protocol"]["v2"]["orderData"]
    assert order_data["solverChainId"] == PERPS.name
    (payment,) = order_data["output"]["payments"]
    assert payment == {"recipient": RECIPIENT, "currency": PERPS_USDC_ADDRESS,
                       "minimumAmount": str(quote.terms.amount_out),
                       "expectedAmount": str(quote.terms.amount_out)}  # fmt: skip
    assert [step["id"] for step in wire["steps"]] == ["approve", "deposit"]
    assert wire["details"]["route"]["destination"]["outputCurrency"]["amount"] == str(
        quote.terms.amount_out
    )


def test_a_spot_token_is_priced_at_its_usd_price_as_a_cross_chain_swap() -> None:
    upper_case = "0x" + HYPE_ID[2:].upper()  # hex: case does not matter
    quote = plan_perps_deposit(_to_perps(destination_currency=upper_case), _context())
    fee = 10_000_000 * EVM.fees.service_fee_bps // 10_000
    assert quote.terms.amount_out == (10_000_000 - fee) * 10**8 // 10**6 // 25
    assert quote.request_type == "Crosschain Swap"
    assert quote.terms.currency_out.address == HYPE_ID


def test_a_third_party_dex_currency_is_the_spot_address_plus_the_dex_names_hex() -> None:
    on_xyz = PERPS.spot_currency(HYPE_ID + b"xyz".hex())
    assert on_xyz is not None and on_xyz.symbol == "xHYPE" and on_xyz.dex == "xyz"
    assert on_xyz.address == HYPE_ID + "78797a"
    assert perps_currency(PERPS, HYPE_ID, "destinationCurrency").symbol == "HYPE"


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"recipient": "EPjFWdd5AufqSSqeM2qACdYv6nQXBZkkk4Ht7dAJ2B8Q"}, "INVALID_RECIPIENT"),
        ({"user": "nobody"}, "INVALID_ADDRESS"),
        ({"destination_currency": "0x" + "0" * 40}, "UNSUPPORTED_CURRENCY"),
        ({"destination_currency": HYPE_ID + "78797a"}, "UNSUPPORTED_CURRENCY"),  # no bridging
        ({"origin_currency": "0x" + "12" * 20}, "UNSUPPORTED_CURRENCY"),
        ({"trade_type": "EXACT_OUTPUT"}, "UNSUPPORTED_EXECUTION_TYPE"),
        ({"amount": "0"}, "AMOUNT_TOO_LOW"),
    ],
)
def test_bad_input_is_refused_with_its_code(changes: dict[str, Any], code: str) -> None:
    with pytest.raises(QuoteError) as refused:
        plan_perps_deposit(_to_perps(**changes), _context())
    assert refused.value.error_code == code


def test_an_amount_worth_less_than_one_unit_out_is_too_low() -> None:
    context = _context()
    cheap = PerpsQuoteContext(**{**context.__dict__, "evm_price": Decimal("0.000001")})
    with pytest.raises(QuoteError) as refused:
        plan_perps_deposit(_to_perps(amount="1"), cheap)
    assert refused.value.error_code == "AMOUNT_TOO_LOW"


def test_a_missing_recipient_is_the_users_own_exchange_account() -> None:
    quote = plan_perps_deposit(_to_perps(recipient=None), _context())
    assert quote.terms.recipient == "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"


def test_the_answer_matches_the_quote_schema() -> None:
    # `feeSponsorship` was once missing from it.
    schema = json.loads((SCHEMAS_DIR / "quote.schema.json").read_text())
    wire = perps_deposit_wire(plan_perps_deposit(_to_perps(), _context()), EVM)
    jsonschema.Draft202012Validator(schema).validate(wire)
    assert wire["feeSponsorship"]["quoted"]["userPaysTotal"]["amount"] == str(
        10_000_000 * EVM.fees.service_fee_bps // 10_000
    )
