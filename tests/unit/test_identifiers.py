"""The strict identifier parsers every route uses: ASCII only, whole strings, database ranges."""

from __future__ import annotations

import base58
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crossfill.domain.identifiers import (
    INT64_MAX,
    InvalidIdentifier,
    parse_address,
    parse_chain_id,
    parse_hex_bytes,
    parse_row_id,
    parse_svm_address,
    parse_text,
    parse_tx_hash,
    parse_uint,
    parse_unix_seconds,
)

HASH = "0x" + "ab" * 32
ADDRESS = "0x" + "Cd" * 20


@pytest.mark.parametrize(
    "text",
    ["²", "\uff15", "٣", "1\n", " 1", "+1", "1_0", "0x10", "", "1.0", "9" * 5_000, str(2**63)],
)
def test_integers_are_ascii_digits_below_2_63(text: str) -> None:
    with pytest.raises(InvalidIdentifier):
        parse_uint(text, "limit")


@given(st.integers(min_value=0, max_value=INT64_MAX))
def test_every_bigint_round_trips(value: int) -> None:
    assert parse_uint(str(value), "x") == value == parse_uint(value, "x")


@pytest.mark.parametrize("value", [True, -1, 2**63, 0])
def test_chain_ids_are_positive_bigints(value: int) -> None:
    with pytest.raises(InvalidIdentifier):
        parse_chain_id(value)


def test_row_ids_and_timestamps_have_their_ranges() -> None:
    assert parse_row_id("7", "id") == 7
    with pytest.raises(InvalidIdentifier):
        parse_row_id(str(2**63), "id")
    assert parse_unix_seconds("1700000000", "startTimestamp") == 1_700_000_000
    with pytest.raises(InvalidIdentifier):
        parse_unix_seconds("999999999999999999", "startTimestamp")


@pytest.mark.parametrize("suffix", ["\n", "\r", " ", "\x00", "0"])
def test_hashes_and_addresses_match_whole_strings(suffix: str) -> None:
    with pytest.raises(InvalidIdentifier):
        parse_tx_hash(HASH + suffix)
    with pytest.raises(InvalidIdentifier):
        parse_address(ADDRESS + suffix, "recipient")


def test_hashes_and_addresses_are_lower_cased() -> None:
    assert parse_tx_hash(HASH.upper().replace("0X", "0x")) == HASH
    assert parse_address(ADDRESS, "user") == ADDRESS.lower()


def test_hex_bytes_are_whole_bytes() -> None:
    assert parse_hex_bytes("0x01ff", "data") == b"\x01\xff"
    for bad in ("0x1", "01", "0x01\n", "0xzz"):
        with pytest.raises(InvalidIdentifier):
            parse_hex_bytes(bad, "data")


@pytest.mark.parametrize("text", ["\ud800", "a\nb", "x" * 201, "\x1b[31m"])
def test_free_text_is_printable_and_bounded(text: str) -> None:
    with pytest.raises(InvalidIdentifier):
        parse_text(text, "referrer")


def test_free_text_keeps_unicode_letters() -> None:
    assert parse_text("Zürich wallet", "referrer") == "Zürich wallet"


SVM_ADDRESS = "EPjFWdd5AufqSSqeM2qACdYv6nQXBZkkk4Ht7dAJ2B8Q"


@pytest.mark.parametrize("address", [SVM_ADDRESS, "1" * 32, "11111111111111111111111111111112"])
def test_svm_addresses_are_kept_exactly_as_given(address: str) -> None:
    assert parse_svm_address(address, "user") == address


@pytest.mark.parametrize(
    "text",
    [
        ADDRESS,  # an EVM address is not an SVM one
        ADDRESS.lower(),
        SVM_ADDRESS.lower(),  # lower-casing changes the bytes: here, to a non-32-byte value
        SVM_ADDRESS[:-1] + "0",  # 0, O, I and l are not base58
        SVM_ADDRESS[:-1] + "l",
        "1" * 31,
        "z" * 44,  # 44 characters, but more than 32 bytes
        SVM_ADDRESS + "\n",
        "",
        None,
    ],
)
def test_svm_address_refuses_evm_addresses_and_non_base58(text: object) -> None:
    with pytest.raises(InvalidIdentifier, match="user must be a base58 SVM address"):
        parse_svm_address(text, "user")


@given(st.binary(min_size=32, max_size=32))
def test_svm_address_parses_every_32_byte_key(key: bytes) -> None:
    text = base58.b58encode(key).decode()
    assert parse_svm_address(text, "recipient") == text


def test_evm_address_parser_refuses_svm_addresses() -> None:
    with pytest.raises(InvalidIdentifier):
        parse_address(SVM_ADDRESS, "recipient")
