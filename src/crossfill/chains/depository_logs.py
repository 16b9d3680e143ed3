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


def to_hex(value: Any) -> str:
    """0x-hex of HexBytes/bytes, or the string as it is."""
    return value if isinstance(value, str) else "0x" + bytes(value).hex()


def decode_deposit(log: Any) -> DepositLog | None:
    """A DepositLog for a NativeDeposit or Erc20Deposit log; None for any other log."""
    topics = [to_hex(topic) for topic in log["topics"]]
    if not topics:
        return None
    data = bytes.fromhex(to_hex(log["data"])[2:])
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
        tx_hash=to_hex(log["transactionHash"]),
        log_index=int(log["logIndex"]),
        block_number=int(log["blockNumber"]),
        block_hash=to_hex(log["blockHash"]),
        order_id="0x" + bytes(order_id).hex(),
        depositor=str(depositor).lower(),
        currency=str(currency).lower(),
        amount=int(amount),
    )


TRANSFER_TOPIC = "0x" + keccak(text="Transfer(address,address,uint256)").hex()
ERC20_TRANSFER_SELECTOR = keccak(text="transfer(address,uint256)")[:4]
_TAGGED_TRANSFER_LENGTH = 4 + 32 + 32 + 32


def address_topic(address: str) -> str:
    return "0x" + "00" * 12 + address.lower()[2:]


def decode_implicit_deposit(log: Any, tx_input: bytes, tx_to: str) -> DepositLog | None:
    """A token Transfer into the Depository made by a plain `transfer` whose calldata ends with
    the orderId. Explicit deposits (calls to the Depository) and untagged transfers are None;
    ids starting with 16 zero bytes are ignored, as the protocol says."""
    token = to_hex(log["address"]).lower()
    if tx_to.lower() != token or len(tx_input) != _TAGGED_TRANSFER_LENGTH:
        return None
    if tx_input[:4] != ERC20_TRANSFER_SELECTOR:
        return None
    order_id = tx_input[-32:]
    if order_id[:16] == bytes(16):
        return None
    topics = [to_hex(topic) for topic in log["topics"]]
    (amount,) = decode(["uint256"], bytes.fromhex(to_hex(log["data"])[2:]))
    return DepositLog(
        tx_hash=to_hex(log["transactionHash"]),
        log_index=int(log["logIndex"]),
        block_number=int(log["blockNumber"]),
        block_hash=to_hex(log["blockHash"]),
        order_id="0x" + order_id.hex(),
        depositor="0x" + topics[1][-40:],
        currency=token,
        amount=int(amount),
    )
