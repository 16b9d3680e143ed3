"""Which token transfers into the Depository count as implicit (tagged) deposits."""

from __future__ import annotations

from eth_abi.abi import encode

from crossfill.kinds.evm.depository_logs import address_topic, decode_implicit_deposit

# The standard ERC-20 values, written out here so the ABI-derived ones are checked against them.
TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
ERC20_TRANSFER_SELECTOR = bytes.fromhex("a9059cbb")

TOKEN = "0x" + "aa" * 20
DEPOSITORY = "0x" + "dd" * 20
SENDER = "0x" + "5e" * 20
ORDER_ID = bytes.fromhex("ab" * 32)


def _log(amount: int = 1_000_000) -> dict[str, object]:
    return {
        "address": TOKEN,
        "topics": [TRANSFER_TOPIC, address_topic(SENDER), address_topic(DEPOSITORY)],
        "data": "0x" + encode(["uint256"], [amount]).hex(),
        "transactionHash": "0x" + "01" * 32,
        "logIndex": 3,
        "blockNumber": 7,
        "blockHash": "0x" + "02" * 32,
    }


def _transfer(suffix: bytes) -> bytes:
    return (
        ERC20_TRANSFER_SELECTOR + encode(["address", "uint256"], [DEPOSITORY, 1_000_000]) + suffix
    )


def test_tagged_transfer_is_a_deposit_for_the_suffixed_order() -> None:
    deposit = decode_implicit_deposit(_log(), _transfer(ORDER_ID), TOKEN)
    assert deposit is not None
    assert deposit.order_id == "0x" + ORDER_ID.hex()
    assert (deposit.amount, deposit.currency, deposit.depositor) == (1_000_000, TOKEN, SENDER)
    assert (deposit.log_index, deposit.block_number) == (3, 7)


def test_untagged_transfer_is_not_a_deposit() -> None:
    assert decode_implicit_deposit(_log(), _transfer(b""), TOKEN) is None


def test_transfer_made_by_an_explicit_deposit_is_not_counted_twice() -> None:
    # depositErc20 moves the tokens with transferFrom in a call to the Depository itself.
    assert decode_implicit_deposit(_log(), _transfer(ORDER_ID), DEPOSITORY) is None


def test_ids_starting_with_sixteen_zero_bytes_are_ignored() -> None:
    padded = bytes(16) + bytes.fromhex("cd" * 16)
    assert decode_implicit_deposit(_log(), _transfer(padded), TOKEN) is None


def test_other_calls_with_the_right_length_are_not_deposits() -> None:
    approve = bytes.fromhex("095ea7b3") + _transfer(ORDER_ID)[4:]
    assert decode_implicit_deposit(_log(), approve, TOKEN) is None
