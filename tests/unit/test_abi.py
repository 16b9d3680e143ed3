"""Selectors and topics come from the compiled ABIs; these are checked against the values the
standards and the deployed contracts are known by."""

from __future__ import annotations

import pytest
from eth_abi.abi import encode
from eth_abi.exceptions import EncodingError

from crossfill.contracts.abi import ERC20, PRICE_FEED, V2_PAIR, V2_ROUTER, event, function
from crossfill.contracts.abi_encoders import ENCODERS

WELL_KNOWN_SELECTORS = [
    (ERC20, "transfer", "a9059cbb"),
    (ERC20, "approve", "095ea7b3"),
    (ERC20, "transferFrom", "23b872dd"),
    (ERC20, "balanceOf", "70a08231"),
    (ERC20, "allowance", "dd62ed3e"),
    ("WETH", "deposit", "d0e30db0"),
    ("WETH", "withdraw", "2e1a7d4d"),
    (V2_ROUTER, "swapExactETHForTokens", "7ff36ab5"),
    (V2_ROUTER, "swapExactTokensForETH", "18cbafe5"),
    (V2_ROUTER, "swapExactTokensForTokens", "38ed1739"),
    (V2_PAIR, "getReserves", "0902f1ac"),
    (PRICE_FEED, "latestRoundData", "feaf968c"),
    (PRICE_FEED, "decimals", "313ce567"),
]


@pytest.mark.parametrize(("contract", "name", "selector"), WELL_KNOWN_SELECTORS)
def test_selector_matches_the_standard(contract: str, name: str, selector: str) -> None:
    assert function(contract, name).selector.hex() == selector


def test_transfer_topic_and_its_data_types() -> None:
    transfer = event(ERC20, "Transfer")
    assert transfer.topic == "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
    assert transfer.data_types == ("uint256",)  # from and to are indexed


def test_overloads_are_told_apart_by_argument_count() -> None:
    with pytest.raises(LookupError, match="2 ABI functions match"):
        function("Depository", "depositErc20")
    assert function("Depository", "depositErc20", 4).input_types == (
        "address",
        "address",
        "uint256",
        "bytes32",
    )


def test_struct_arguments_are_encoded_as_tuples() -> None:
    execute = function("Depository", "execute")
    assert execute.input_types == ("((address,bytes,uint256,bool)[],uint256,uint256)", "bytes")
    assert execute.encode(([], 1, 2), b"")[:4] == execute.selector


@pytest.mark.parametrize(
    ("contract", "name", "arguments", "values"),
    [
        (ERC20, "approve", None, ("0x" + "11" * 20, 10**18)),
        ("Depository", "depositErc20", 4, ("0x" + "22" * 20, "0x" + "33" * 20, 5, b"\x01" * 32)),
        ("Depository", "execute", None, (([("0x" + "44" * 20, b"\x02\x03", 7, True)], 1, 2), b"x")),
        # A checksummed address, and an address[] (a swap's path).
        (ERC20, "transfer", None, ("0x70997970C51812dc3A010C7d01b50e0d17dc79C8", 1)),
        (
            V2_ROUTER,
            "swapExactETHForTokens",
            None,
            (1, ["0x" + "55" * 20, "0x" + "66" * 20], "0x" + "77" * 20, 2**32 - 1),
        ),
    ],
)
def test_calldata_is_what_eth_abi_encodes(
    contract: str, name: str, arguments: int | None, values: tuple[object, ...]
) -> None:
    abi_function = function(contract, name, arguments)
    expected = abi_function.selector + encode(list(abi_function.input_types), list(values))
    assert abi_function.encode(*values) == expected
    assert abi_function.encode(*values) == expected  # the encoder kept from the first call


@pytest.mark.parametrize(
    "address", ["0x12", "0x" + "1" * 41, "11" * 20, "0x" + "g1" * 20, b"\x01" * 19, 5, None]
)
def test_arguments_of_the_wrong_type_are_refused(address: object) -> None:
    with pytest.raises(EncodingError):
        function(ERC20, "approve").encode(address, 1)


@pytest.mark.parametrize(
    "batch",
    [
        ([("0x12", b"", 1, True)], 1, 2),  # an element that is no address
        ([("0x" + "44" * 20, b"", -1, True)], 1, 2),  # a negative uint
        ([("0x" + "44" * 20, b"", 1)], 1, 2),  # a call one field short
        ([], 1),  # a batch one field short
        "not a tuple",
    ],
)
def test_struct_arguments_that_do_not_fit_are_refused(batch: object) -> None:
    with pytest.raises(EncodingError):
        function("Depository", "execute").encode(batch, b"")


@pytest.mark.parametrize("bits", [8, 32, 256])
def test_uints_encode_as_eth_abi_does_up_to_their_bounds(bits: int) -> None:
    encoder = ENCODERS.get_encoder(f"uint{bits}")
    for value in (0, 1, 2**bits - 1):
        assert encoder(value) == encode([f"uint{bits}"], [value])
    for refused in (2**bits, -1, True, 1.0, "1"):
        with pytest.raises(EncodingError):
            encoder(refused)


def test_an_address_may_be_its_20_bytes() -> None:
    approve = function(ERC20, "approve")
    assert approve.encode(b"\x11" * 20, 3) == approve.encode("0x" + "11" * 20, 3)


def test_unknown_names_are_refused() -> None:
    with pytest.raises(LookupError):
        event("Filler", "NoSuchEvent")
