"""What a receipt says was moved, decoded with the compiled ABIs from logs built out of the
events' signatures."""

from __future__ import annotations

from eth_abi.abi import encode

from crossfill.kinds.evm.receipt_outcomes import depository_payout, fee_paid, swap_output
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.unit.receipt_logs import (
    SWAP,
    call_executed_log,
    raw_log,
    swap_log,
    topic,
    transfer_log,
)

PAIR, OTHER_PAIR = "0x" + "a1" * 20, "0x" + "a2" * 20
DEPOSITORY, TOKEN = "0x" + "d0" * 20, "0x" + "70" * 20
RECIPIENT, SOMEONE = "0x" + "be" * 20, "0x" + "5e" * 20


def test_fee_is_gas_used_times_effective_gas_price() -> None:
    assert fee_paid({"gasUsed": 21_000, "effectiveGasPrice": 3 * 10**9}) == 63 * 10**12


def test_swap_output_is_what_the_last_hop_paid_the_recipient() -> None:
    logs = [
        transfer_log(TOKEN, SOMEONE, PAIR, 5),
        swap_log(OTHER_PAIR, PAIR, 0, 777),  # first hop: pays the next pair
        swap_log(PAIR, RECIPIENT, 2_990_123_456, 0),
    ]
    assert swap_output(logs, RECIPIENT) == 2_990_123_456
    assert swap_output(logs, SOMEONE) == 0


def test_native_payout_is_the_value_of_the_depositorys_calls_to_the_recipient() -> None:
    logs = [
        call_executed_log(DEPOSITORY, RECIPIENT, b"", 49_000),
        call_executed_log(DEPOSITORY, SOMEONE, b"", 1),  # someone else's payout
        call_executed_log(OTHER_PAIR, RECIPIENT, b"", 2),  # not our Depository
        transfer_log(TOKEN, DEPOSITORY, RECIPIENT, 7),  # a token, not ether
    ]
    paid = depository_payout(
        logs, depository=DEPOSITORY, currency=NATIVE_EVM_ADDRESS, recipient=RECIPIENT
    )
    assert paid == 49_000


def test_token_payout_is_the_tokens_transfers_out_of_the_depository() -> None:
    transfer_call = bytes.fromhex("a9059cbb") + encode(["address", "uint256"], [RECIPIENT, 29])
    logs = [
        call_executed_log(DEPOSITORY, TOKEN, transfer_call, 0),
        transfer_log(TOKEN, DEPOSITORY, RECIPIENT, 29_900_000),
        transfer_log(TOKEN, SOMEONE, RECIPIENT, 5),  # not from the Depository
        transfer_log(PAIR, DEPOSITORY, RECIPIENT, 3),  # another token
    ]
    paid = depository_payout(logs, depository=DEPOSITORY, currency=TOKEN, recipient=RECIPIENT)
    assert paid == 29_900_000


def test_logs_of_other_events_or_shapes_are_ignored() -> None:
    malformed = raw_log(PAIR, [topic(SWAP)], b"")
    assert swap_output([malformed, transfer_log(TOKEN, PAIR, RECIPIENT, 9)], RECIPIENT) == 0
