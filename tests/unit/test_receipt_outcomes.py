"""What a receipt says was moved, decoded with the compiled ABIs: logs built here from the
events' signatures, independently of the decoder."""

from __future__ import annotations

from typing import Any

from eth_abi.abi import encode
from eth_utils.crypto import keccak

from crossfill.chains.receipt_outcomes import depository_payout, fee_paid, swap_output
from crossfill.types import NATIVE_EVM_ADDRESS

PAIR, OTHER_PAIR = "0x" + "a1" * 20, "0x" + "a2" * 20
DEPOSITORY, TOKEN = "0x" + "d0" * 20, "0x" + "70" * 20
RECIPIENT, SOMEONE = "0x" + "be" * 20, "0x" + "5e" * 20


def _topic(signature: str) -> bytes:
    return keccak(text=signature)


def _address_topic(address: str) -> bytes:
    return bytes(12) + bytes.fromhex(address[2:])


def _log(address: str, topics: list[bytes], data: bytes, index: int = 0) -> dict[str, Any]:
    return {"address": address, "topics": topics, "data": data, "logIndex": index}


def _swap(pair: str, to: str, out0: int, out1: int) -> dict[str, Any]:
    topics = [
        _topic("Swap(address,uint256,uint256,uint256,uint256,address)"),
        _address_topic(SOMEONE),
        _address_topic(to),
    ]
    return _log(pair, topics, encode(["uint256"] * 4, [1, 0, out0, out1]))


def _transfer(token: str, sender: str, to: str, value: int) -> dict[str, Any]:
    topics = [
        _topic("Transfer(address,address,uint256)"),
        _address_topic(sender),
        _address_topic(to),
    ]
    return _log(token, topics, encode(["uint256"], [value]))


def _call_executed(to: str, data: bytes, value: int) -> dict[str, Any]:
    call = (to, data, value, False)
    body = encode(["bytes32", "(address,bytes,uint256,bool)"], [bytes(32), call])
    return _log(DEPOSITORY, [_topic("CallExecuted(bytes32,(address,bytes,uint256,bool))")], body)


def test_fee_is_gas_used_times_effective_gas_price() -> None:
    assert fee_paid({"gasUsed": 21_000, "effectiveGasPrice": 3 * 10**9}) == 63 * 10**12


def test_swap_output_is_what_the_last_hop_paid_the_recipient() -> None:
    logs = [
        _transfer(TOKEN, SOMEONE, PAIR, 5),
        _swap(OTHER_PAIR, PAIR, 0, 777),  # first hop: pays the next pair
        _swap(PAIR, RECIPIENT, 2_990_123_456, 0),
    ]
    assert swap_output(logs, RECIPIENT) == 2_990_123_456
    assert swap_output(logs, SOMEONE) == 0


def test_native_payout_is_the_value_of_the_depositorys_calls_to_the_recipient() -> None:
    logs = [
        _call_executed(RECIPIENT, b"", 49_000),
        _call_executed(SOMEONE, b"", 1),  # someone else's payout
        _transfer(TOKEN, DEPOSITORY, RECIPIENT, 7),  # a token, not ether
    ]
    paid = depository_payout(
        logs, depository=DEPOSITORY, currency=NATIVE_EVM_ADDRESS, recipient=RECIPIENT
    )
    assert paid == 49_000


def test_token_payout_is_the_tokens_transfers_out_of_the_depository() -> None:
    transfer_call = bytes.fromhex("a9059cbb") + encode(["address", "uint256"], [RECIPIENT, 29])
    logs = [
        _call_executed(TOKEN, transfer_call, 0),
        _transfer(TOKEN, DEPOSITORY, RECIPIENT, 29_900_000),
        _transfer(TOKEN, SOMEONE, RECIPIENT, 5),  # not from the Depository
        _transfer(PAIR, DEPOSITORY, RECIPIENT, 3),  # another token
    ]
    paid = depository_payout(logs, depository=DEPOSITORY, currency=TOKEN, recipient=RECIPIENT)
    assert paid == 29_900_000


def test_logs_of_other_events_or_shapes_are_ignored() -> None:
    malformed = _log(PAIR, [_topic("Swap(address,uint256,uint256,uint256,uint256,address)")], b"")
    assert swap_output([malformed, _transfer(TOKEN, PAIR, RECIPIENT, 9)], RECIPIENT) == 0
