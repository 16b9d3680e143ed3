"""The exchange's user-signed transfer actions: typed data and signatures byte-identical to the
exchange's own Python SDK, recovery of the signer, wire parsing and amounts."""

from __future__ import annotations

from typing import Any

import pytest
from eth_account import Account
from hyperliquid.utils import signing as sdk

from crossfill.kinds.perps.actions import (
    MalformedAction,
    SendAsset,
    SpotSend,
    UsdSend,
    format_amount,
    parse_action,
    parse_amount,
    parse_signature,
    recover_signer,
    sign_action,
    typed_data,
)

WALLET = Account.from_key("0x" + "42" * 32)
DESTINATION = "0x" + "ab" * 20
NONCE = 1_763_900_000_000
TESTNET_SIGNATURE_CHAIN = 0x66EEE  # the SDK's fixed signatureChainId


def _usd_send() -> UsdSend:
    return UsdSend("Testnet", TESTNET_SIGNATURE_CHAIN, DESTINATION, "12.5", time=NONCE)


def _spot_send() -> SpotSend:
    return SpotSend(
        "Testnet", TESTNET_SIGNATURE_CHAIN, DESTINATION, "3",
        token="HYPE:0x0d01dc56dcaaca66ad901c959b4011ec", time=NONCE,
    )  # fmt: skip


def _send_asset() -> SendAsset:
    return SendAsset(
        "Testnet", TESTNET_SIGNATURE_CHAIN, DESTINATION, "7.25", source_dex="",
        destination_dex="", token="USDC:0x6d1e7cde53ba9467b783cb7c530ce054",
        from_sub_account="", nonce_value=NONCE,
    )  # fmt: skip


def _sdk_signature(action: UsdSend | SpotSend | SendAsset) -> dict[str, Any]:
    """What the exchange's SDK signs for the same transfer (it fills in the chain fields)."""
    wire = action.wire()
    del wire["signatureChainId"], wire["hyperliquidChain"]
    signer = {
        "usdSend": sdk.sign_usd_transfer_action,
        "spotSend": sdk.sign_spot_transfer_action,
        "sendAsset": sdk.sign_send_asset_action,
    }[action.kind]
    signature: dict[str, Any] = signer(WALLET, wire, False)
    assert wire == action.wire()  # the SDK's action, once it added its fields, is ours
    return signature


@pytest.mark.parametrize("action", [_usd_send(), _spot_send(), _send_asset()])
def test_signatures_are_byte_identical_to_the_exchange_sdk(
    action: UsdSend | SpotSend | SendAsset,
) -> None:
    ours = sign_action(action, WALLET)
    theirs = _sdk_signature(action)
    # The SDK writes r and s without leading zeros; the numbers are what is signed.
    assert (int(theirs["r"], 16), int(theirs["s"], 16), theirs["v"]) == (
        int(ours.signature.r, 16), int(ours.signature.s, 16), ours.signature.v,
    )  # fmt: skip
    assert recover_signer(action, ours.signature) == WALLET.address


def test_typed_data_names_the_exchange_domain_and_primary_type() -> None:
    document = typed_data(_send_asset())
    assert document["domain"] == {
        "name": "HyperliquidSignTransaction", "version": "1", "chainId": 0x66EEE,
        "verifyingContract": "0x0000000000000000000000000000000000000000",
    }  # fmt: skip
    assert document["primaryType"] == "HyperliquidTransaction:SendAsset"
    assert [f["name"] for f in document["types"]["HyperliquidTransaction:SendAsset"]] == [
        "hyperliquidChain", "destination", "sourceDex", "destinationDex", "token", "amount",
        "fromSubAccount", "nonce",
    ]  # fmt: skip
    assert document["message"]["type"] == "sendAsset"
    assert document["message"]["signatureChainId"] == "0x66eee"


@pytest.mark.parametrize("action", [_usd_send(), _spot_send(), _send_asset()])
def test_the_wire_form_parses_back_to_the_same_action(
    action: UsdSend | SpotSend | SendAsset,
) -> None:
    assert parse_action(action.wire()) == action
    assert action.nonce == NONCE


def test_a_changed_field_recovers_another_signer() -> None:
    signed = sign_action(_usd_send(), WALLET)
    tampered = UsdSend("Testnet", TESTNET_SIGNATURE_CHAIN, DESTINATION, "1250", time=NONCE)
    assert recover_signer(tampered, signed.signature) != WALLET.address


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"type": "withdraw3"}, "Unsupported action type"),
        ({"time": "1"}, "time must be an unsigned 64-bit integer"),
        ({"time": -1}, "time must be an unsigned 64-bit integer"),
        ({"time": True}, "time must be an unsigned 64-bit integer"),
        ({"amount": "1e3"}, "amount must be a decimal string"),
        ({"destination": "0x1234"}, "destination must be a 0x-prefixed"),
        ({"hyperliquidChain": "Devnet"}, "hyperliquidChain must be Mainnet or Testnet"),
        ({"signatureChainId": 421614}, "signatureChainId must be a hex string"),
        ({"vault": "x"}, "Unknown field 'vault'"),
    ],
)
def test_malformed_actions_are_refused_with_the_reason(
    change: dict[str, object], message: str
) -> None:
    with pytest.raises(MalformedAction, match=message):
        parse_action({**_usd_send().wire(), **change})


def test_a_missing_field_is_named() -> None:
    wire = _usd_send().wire()
    del wire["time"]
    with pytest.raises(MalformedAction, match="Missing field 'time'"):
        parse_action(wire)


@pytest.mark.parametrize(
    "signature",
    [None, {}, {"r": "0xz1", "s": "0x2", "v": 27}, {"r": "0x" + "1" * 65, "s": "0x2", "v": 27},
     {"r": "0x" + "1" * 64, "s": "0x" + "2" * 64,
                                                  "v": 29}],
)  # fmt: skip
def test_unreadable_signatures_are_refused(signature: object) -> None:
    with pytest.raises(MalformedAction):
        parse_signature(signature)


@pytest.mark.parametrize(
    ("units", "decimals", "text"),
    [(12_500_000, 6, "12.5"), (1, 6, "0.000001"), (10**8, 8, "1"), (0, 6, "0")],
)
def test_amounts_round_trip_exactly(units: int, decimals: int, text: str) -> None:
    assert format_amount(units, decimals) == text
    assert parse_amount(text, decimals) == units


def test_amounts_finer_than_the_token_are_refused() -> None:
    with pytest.raises(ValueError, match="more than 6 decimals"):
        parse_amount("0.0000001", 6)
