"""`usePermit`: one signature step (an EIP-3009 deposit authorization for the order) instead
of approve and deposit transactions; the solver's origin gas, plus `originGasOverhead`, is
charged as relayer gas."""

from __future__ import annotations

from datetime import timedelta

import pytest
from eth_account import Account

from crossfill.errors import BadRequest
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.permits import deposit_authorization
from crossfill.quoting.response import quote_wire
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support.quote_fixtures import CHAINS, CONTRACT, NOW, USDC, body, quote

USDC_BRIDGE = {"originCurrency": USDC, "destinationCurrency": USDC, "amount": str(100 * 10**6)}


def test_a_permit_quote_is_one_signature_step_for_its_order() -> None:
    permit = quote(body(**USDC_BRIDGE, usePermit=True))
    wire = quote_wire(permit, allowance=0, user_balance=None)
    (step,) = wire["steps"]
    assert (step["id"], step["kind"]) == ("deposit", "signature")
    (item,) = step["items"]
    sign, post = item["data"]["sign"], item["data"]["post"]
    assert sign["signatureKind"] == "eip712"
    assert sign["primaryType"] == "ReceiveWithAuthorization"
    assert sign["domain"] == {
        "name": "USD Coin",
        "version": "2",
        "chainId": CHAINS[0],
        "verifyingContract": USDC,
    }
    assert sign["value"]["to"] == CONTRACT  # the origin Depository
    assert sign["value"]["value"] == str(permit.split.amount_in)
    assert sign["value"]["nonce"] == permit.order_id
    assert post == {
        "endpoint": "/execute/permits",
        "method": "POST",
        "body": {"kind": "eip3009", "requestId": permit.request_id, "api": "bridge"},
    }
    assert item["check"]["endpoint"].endswith(permit.request_id)
    assert wire["fees"]["gas"]["amount"] == "0"  # the user sends nothing


def test_the_solver_s_origin_gas_and_its_overhead_are_charged() -> None:
    plain = quote(body(**USDC_BRIDGE))
    permit = quote(body(**USDC_BRIDGE, usePermit=True))
    heavier = quote(body(**USDC_BRIDGE, usePermit=True, originGasOverhead=100_000))
    assert plain.split.relayer_gas < permit.split.relayer_gas < heavier.split.relayer_gas
    assert permit.amount_out < plain.amount_out


def test_the_authorization_ends_with_the_permit_expiry_or_the_quote() -> None:
    permit = quote(body(**USDC_BRIDGE, usePermit=True, permitExpiry=120))
    assert permit.permit_valid_before == int((NOW + timedelta(seconds=120)).timestamp())
    capped = quote(body(**USDC_BRIDGE, usePermit=True, permitExpiry=3600, ttl=300))
    assert capped.permit_valid_before == int(capped.expires_at.timestamp())


def test_a_signed_authorization_recovers_to_the_user() -> None:
    user = Account.create()
    permit = quote(body(**USDC_BRIDGE, usePermit=True, user=user.address))
    authorization = deposit_authorization(permit)
    signature = authorization.sign(bytes(user.key))
    assert authorization.signer(signature) == user.address
    assert authorization.signer(b"\x00" * 65) != user.address


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"usePermit": True, "originCurrency": NATIVE_EVM_ADDRESS}, QuoteError),
        ({"usePermit": True, "destinationChainId": CHAINS[0]}, QuoteError),
        ({"usePermit": True, "explicitDeposit": False}, BadRequest),
        ({"usePermit": True, "permitExpiry": 10}, BadRequest),
        ({"usePermit": True, "originGasOverhead": 10**9}, BadRequest),
        ({"originGasOverhead": 50_000}, BadRequest),
        ({"permitExpiry": 600}, BadRequest),
    ],
)
def test_a_permit_that_cannot_be_used_is_refused(
    fields: dict[str, object], error: type[Exception]
) -> None:
    with pytest.raises(error):
        quote(body(**{**USDC_BRIDGE, **fields}))
