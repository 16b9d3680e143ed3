"""Revert data decoded with the compiled ABIs: custom errors, Error(string), Panic, unknown."""

from __future__ import annotations

from eth_abi.abi import encode
from eth_utils.crypto import keccak

from crossfill.app.fills import revert_reason
from crossfill.contracts.reverts import RevertReason, decode_revert


def _error(signature: str, types: list[str], args: list[object]) -> bytes:
    return keccak(text=signature)[:4] + encode(types, args)


def test_a_custom_error_of_our_contracts_is_named_with_its_arguments() -> None:
    order_id = b"\x07" * 32
    reason = decode_revert(_error("AlreadyFilled(bytes32)", ["bytes32"], [order_id]))
    assert reason == RevertReason("AlreadyFilled", (order_id,))
    assert reason.message == "AlreadyFilled(0x" + "07" * 32 + ")"


def test_a_revert_string_and_a_panic_are_decoded() -> None:
    text = "UniswapV2Router: INSUFFICIENT_OUTPUT_AMOUNT"
    assert decode_revert(_error("Error(string)", ["string"], [text])).message == text
    assert decode_revert(_error("Panic(uint256)", ["uint256"], [0x11])) == RevertReason(
        "Panic", (0x11,)
    )


def test_unknown_or_truncated_data_is_an_unnamed_reason() -> None:
    assert decode_revert(b"").name == ""
    assert decode_revert(b"\xde\xad\xbe\xef").name == ""
    assert decode_revert(keccak(text="Error(string)")[:4] + b"\x00" * 3).name == ""


def test_only_the_swaps_exact_floor_messages_are_slippage() -> None:
    floor = decode_revert(
        _error("Error(string)", ["string"], ["UniswapV2Router: INSUFFICIENT_OUTPUT_AMOUNT"])
    )
    assert revert_reason(floor) == "SLIPPAGE"
    lookalike = decode_revert(
        _error("Error(string)", ["string"], ["not INSUFFICIENT_OUTPUT_AMOUNT at all"])
    )
    assert revert_reason(lookalike) == "EXECUTION_REVERTED"
    assert revert_reason(RevertReason("AlreadyFilled", (b"",))) == "EXECUTION_REVERTED"
