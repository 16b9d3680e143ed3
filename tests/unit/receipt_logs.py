"""Receipt logs built from the events' signatures, independently of the decoder under test."""

from __future__ import annotations

from typing import Any

from eth_abi.abi import encode
from eth_utils.crypto import keccak

SWAP = "Swap(address,uint256,uint256,uint256,uint256,address)"
TRANSFER = "Transfer(address,address,uint256)"
CALL_EXECUTED = "CallExecuted(bytes32,(address,bytes,uint256,bool))"
TRADER = "0x" + "7a" * 20


def topic(signature: str) -> bytes:
    return keccak(text=signature)


def address_topic(address: str) -> bytes:
    return bytes(12) + bytes.fromhex(address[2:])


def raw_log(address: str, topics: list[bytes], data: bytes) -> dict[str, Any]:
    return {"address": address, "topics": topics, "data": data, "logIndex": 0}


def swap_log(pair: str, to: str, out0: int, out1: int) -> dict[str, Any]:
    topics = [topic(SWAP), address_topic(TRADER), address_topic(to)]
    return raw_log(pair, topics, encode(["uint256"] * 4, [1, 0, out0, out1]))


def transfer_log(token: str, sender: str, to: str, value: int) -> dict[str, Any]:
    topics = [topic(TRANSFER), address_topic(sender), address_topic(to)]
    return raw_log(token, topics, encode(["uint256"], [value]))


def call_executed_log(
    depository: str, to: str = TRADER, data: bytes = b"", value: int = 0, *, payout_id: str = ""
) -> dict[str, Any]:
    """The Depository's log of one executed call; `payout_id`: the hash of the payout it
    belongs to (0x hex; zero when not given)."""
    call = (to, data, value, False)
    call_id = bytes.fromhex(payout_id[2:]) if payout_id else bytes(32)
    body = encode(["bytes32", "(address,bytes,uint256,bool)"], [call_id, call])
    return raw_log(depository, [topic(CALL_EXECUTED)], body)


NATIVE_DEPOSIT = "NativeDeposit(address,uint256,bytes32)"
MULTICALL = "Multicall(address,bytes)"


def _mined(entry: dict[str, Any]) -> dict[str, Any]:
    """A log as a receipt holds it: with its transaction and block."""
    return {
        **entry,
        "transactionHash": "0x" + "aa" * 32,
        "blockNumber": 7,
        "blockHash": "0x" + "bb" * 32,
    }


def native_deposit_log(
    depository: str,
    depositor: str,
    amount: int,
    order_id: str,
    *,
    mined_in: int | None = None,
    tx_hash: str | None = None,
) -> dict[str, Any]:
    """A NativeDeposit as a receipt holds it; `mined_in`: its block (the block's hash made
    from its number), `tx_hash`: its transaction, where the test says."""
    body = encode(
        ["address", "uint256", "bytes32"], [depositor, amount, bytes.fromhex(order_id[2:])]
    )
    log = _mined(raw_log(depository, [topic(NATIVE_DEPOSIT)], body))
    if mined_in is not None:
        log |= {"blockNumber": mined_in, "blockHash": "0x" + f"{mined_in:064x}"}
    if tx_hash is not None:
        log["transactionHash"] = tx_hash
    return log


def multicall_log(router: str, sender: str, metadata: bytes) -> dict[str, Any]:
    topics = [topic(MULTICALL), address_topic(sender)]
    return _mined(raw_log(router, topics, encode(["bytes"], [metadata])))
