"""Withdrawal quotes from the perps exchange: the v2 rule, the amounts, and the two steps
(authorize, then the exchange transfer) sharing one nonce."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data

from crossfill.domain.nonce_mapping import NonceMapping
from crossfill.domain.order import ORDER_HASHER
from crossfill.kinds.evm.config import evm_chains
from crossfill.kinds.perps.withdrawal import (
    PerpsWithdrawalContext,
    PerpsWithdrawalSide,
    plan_perps_withdrawal,
)
from crossfill.kinds.perps.withdrawal_response import perps_withdrawal_wire
from crossfill.quoting.cross_vm import QuotedCurrency, QuoteStamp
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteRequest
from crossfill.types import Address, ChainId
from tests.unit.deployment_samples import sample_deployment

EVM = evm_chains(sample_deployment())[0]
EVM_USDC = next(c.address for c in EVM.erc20_currencies if c.symbol == "USDC")
PERPS_USDC = "0x" + "0" * 32
SOLVER_ACCOUNT = "0x" + "5a" * 20
USER = Account.from_key("0x" + "07" * 32)
NOW = datetime(2026, 11, 23, 15, 0, tzinfo=UTC)
SIDE = PerpsWithdrawalSide(
    chain_id=1337,
    solver_account=SOLVER_ACCOUNT,
    network="Testnet",
    currency=QuotedCurrency(
        1337, "perps-exchange", PERPS_USDC, "USDC", "USD Coin", 6, False, "", Decimal(1)
    ),
    token="USDC:0x6d1e7cde53ba9467b783cb7c530ce054",
)
SEND_ASSET_TYPES = {"HyperliquidTransaction:SendAsset": [{"name": "nonce", "type": "uint64"}]}


def _context() -> PerpsWithdrawalContext:
    return PerpsWithdrawalContext(
        evm=EVM, perps=SIDE, evm_price=Decimal(1),
        stamp=QuoteStamp(now=NOW, ttl=timedelta(minutes=5), request_id=b"\x01" * 32, salt=7,
                         solver="0x" + "33" * 20),
    )  # fmt: skip


def _body(**changes: Any) -> QuoteRequest:
    fields: dict[str, Any] = {
        "user": USER.address, "origin_chain_id": 1337, "destination_chain_id": EVM.id,
        "origin_currency": PERPS_USDC, "destination_currency": EVM_USDC, "amount": "25000000",
        "trade_type": "EXACT_INPUT", "protocol_version": "v2",
    }  # fmt: skip
    fields.update(changes)
    return QuoteRequest(**fields)


def _wire(body: QuoteRequest | None = None) -> dict[str, Any]:
    quote = plan_perps_withdrawal(body or _body(), _context())
    return perps_withdrawal_wire(
        quote,
        send_asset_types=SEND_ASSET_TYPES,
        send_asset_primary_type="HyperliquidTransaction:SendAsset",
        depository=SOLVER_ACCOUNT,
    )


@pytest.mark.parametrize("version", [None, "v1", "preferV2", "V2"])
def test_a_withdrawal_needs_protocol_version_v2(version: str | None) -> None:
    with pytest.raises(QuoteError) as refused:
        plan_perps_withdrawal(_body(protocol_version=version), _context())
    assert refused.value.error_code == "UNSUPPORTED_EXECUTION_TYPE"
    assert "protocolVersion" in str(refused.value) and "v2" in str(refused.value)


def test_usdc_out_is_the_amount_less_the_service_fee() -> None:
    quote = plan_perps_withdrawal(_body(), _context())
    fee = 25_000_000 * EVM.fees.service_fee_bps // 10_000
    assert (quote.terms.amount_in, quote.terms.service_fee, quote.terms.amount_out) == (
        25_000_000, fee, 25_000_000 - fee,
    )  # fmt: skip
    assert quote.terms.recipient == quote.terms.user == USER.address.lower()
    assert quote.terms.is_bridge


def test_both_steps_carry_one_fresh_millisecond_nonce() -> None:
    wire = _wire()
    authorize, deposit = wire["steps"]
    nonce = int(NOW.timestamp() * 1000)
    assert [authorize["id"], deposit["id"]] == ["authorize", "deposit"]
    assert [authorize["kind"], deposit["kind"]] == ["signature", "transaction"]
    item = deposit["items"][0]["data"]
    assert item["nonce"] == nonce == item["action"]["parameters"]["nonce"]
    assert authorize["items"][0]["data"]["post"]["body"]["nonce"] == nonce
    assert authorize["items"][0]["data"]["sign"]["value"]["nonce"] == nonce
    assert item["action"] == {
        "type": "sendAsset",
        "parameters": {
            "hyperliquidChain": "Testnet", "destination": SOLVER_ACCOUNT, "sourceDex": "",
            "destinationDex": "", "token": "USDC:0x6d1e7cde53ba9467b783cb7c530ce054",
            "amount": "25", "fromSubAccount": "", "nonce": nonce,
        },
    }  # fmt: skip
    assert item["eip712Types"] == SEND_ASSET_TYPES
    assert item["eip712PrimaryType"] == "HyperliquidTransaction:SendAsset"
    # The deposit is followed by the status check; the authorization is not (the fill is
    # what ends a check, and it comes only after the deposit).
    assert deposit["items"][0]["check"]["endpoint"].startswith("/intents/status/v3?requestId=")
    assert "check" not in authorize["items"][0]


def test_the_authorize_step_signs_the_mapping_the_authorize_endpoint_checks() -> None:
    wire = _wire()
    data = wire["steps"][0]["items"][0]["data"]
    sign, post = data["sign"], data["post"]
    assert sign["signatureKind"] == "eip712" and sign["primaryType"] == "NonceMapping"
    assert sign["domain"] == {
        "name": "CrossfillNonceMapping", "version": "2", "chainId": 1,
        "verifyingContract": "0x" + "00" * 20,
    }  # fmt: skip
    assert post["endpoint"] == "/authorize" and post["method"] == "POST"
    body = post["body"]
    assert body == {
        "type": "nonce-mapping", "walletChainId": 1337, "wallet": USER.address.lower(),
        "depositor": USER.address.lower(), "nonce": body["nonce"],
        "id": wire["steps"][0]["requestId"], "signatureChainId": 1,
    }  # fmt: skip
    signed = USER.sign_message(
        encode_typed_data(
            full_message={
                "domain": sign["domain"], "types": sign["types"],
                "primaryType": sign["primaryType"], "message": sign["value"],
            }
        )
    )  # fmt: skip
    mapping = NonceMapping(
        wallet_chain_id=ChainId(body["walletChainId"]), wallet=Address(body["wallet"]),
        depositor=Address(body["depositor"]), request_id=body["id"], nonce=body["nonce"],
        signature_chain_id=ChainId(body["signatureChainId"]),
    )  # fmt: skip
    mapping.check_signature("0x" + bytes(signed.signature).hex())


def test_order_data_pays_the_recipient_on_the_destination_and_hashes_to_the_order_id() -> None:
    quote = plan_perps_withdrawal(_body(recipient="0x" + "44" * 20), _context())
    wire = _wire(_body(recipient="0x" + "44" * 20))
    protocol = wire["protocol"]["v2"]
    order_data = protocol["orderData"]
    assert protocol["orderId"] == quote.order_id
    assert "0x" + ORDER_HASHER.hash_struct("Order", quote.order.typed_message()).hex() == (
        quote.order_id
    )
    (entry,) = order_data["inputs"]
    assert entry["payment"] == {
        "chainId": "perps-exchange", "currency": PERPS_USDC, "amount": "25000000", "weight": "1",
    }  # fmt: skip
    assert entry["refunds"][0]["recipient"] == USER.address.lower()
    (payment,) = order_data["output"]["payments"]
    assert payment["recipient"] == "0x" + "44" * 20
    assert payment["currency"] == EVM_USDC.lower()
    assert payment["expectedAmount"] == str(quote.terms.amount_out)
    assert order_data["output"]["chainId"] == EVM.protocol_name
    assert protocol["paymentDetails"]["depository"] == SOLVER_ACCOUNT


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"origin_currency": "0x" + "11" * 16}, "UNSUPPORTED_CURRENCY"),
        ({"destination_currency": "0x" + "99" * 20}, "UNSUPPORTED_CURRENCY"),
        ({"user": "not an address"}, "INVALID_ADDRESS"),
        ({"recipient": "0x1234"}, "INVALID_RECIPIENT"),
        ({"trade_type": "EXACT_OUTPUT"}, "UNSUPPORTED_EXECUTION_TYPE"),
        ({"amount": "0"}, "AMOUNT_TOO_LOW"),
    ],
)
def test_bad_inputs_are_refused_with_their_code(changes: dict[str, Any], code: str) -> None:
    with pytest.raises(QuoteError) as refused:
        plan_perps_withdrawal(_body(**changes), _context())
    assert refused.value.error_code == code
