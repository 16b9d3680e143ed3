"""Decode the Depository's deposit events (all arguments in the data, none indexed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eth_abi.abi import decode
from eth_utils.crypto import keccak

from crossfill.types import NATIVE_EVM_ADDRESS

NATIVE_DEPOSIT_TOPIC = "0x" + keccak(text="NativeDeposit(address,uint256,bytes32)").hex()
ERC20_DEPOSIT_TOPIC = "0x" + keccak(text="Erc20Deposit(address,address,uint256,bytes32)").hex()
DEPOSIT_TOPICS = [NATIVE_DEPOSIT_TOPIC, ERC20_DEPOSIT_TOPIC]


@dataclass(frozen=True)
class DepositLog:
    tx_hash: str
    log_index: int
    block_number: int
    block_hash: str
    order_id: str
    depositor: str
    currency: str
    amount: int


def _hex(value: Any) -> str:
    return value if isinstance(value, str) else "0x" + bytes(value).hex()


def decode_deposit(log: Any) -> DepositLog | None:
    """A DepositLog for a NativeDeposit or Erc20Deposit log; None for any other log."""
    topics = [_hex(topic) for topic in log["topics"]]
    if not topics:
        return None
    data = bytes.fromhex(_hex(log["data"])[2:])
    if topics[0] == NATIVE_DEPOSIT_TOPIC:
        depositor, amount, order_id = decode(["address", "uint256", "bytes32"], data)
        currency = NATIVE_EVM_ADDRESS
    elif topics[0] == ERC20_DEPOSIT_TOPIC:
        depositor, currency, amount, order_id = decode(
            ["address", "address", "uint256", "bytes32"], data
        )
    else:
        return None
    return DepositLog(
        tx_hash=_hex(log["transactionHash"]),
        log_index=int(log["logIndex"]),
        block_number=int(log["blockNumber"]),
        block_hash=_hex(log["blockHash"]),
        order_id="0x" + bytes(order_id).hex(),
        depositor=str(depositor).lower(),
        currency=str(currency).lower(),
        amount=int(amount),
    )
