"""Decode the Depository's deposit events (all arguments in the data, none indexed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crossfill.contracts.abi import ERC20, AbiEvent, event, function
from crossfill.domain.deposit_log import DEPOSITORY as DEPOSITORY
from crossfill.domain.deposit_log import RECEIVER as RECEIVER
from crossfill.domain.deposit_log import DepositLog as DepositLog
from crossfill.types import NATIVE_EVM_ADDRESS


def native_deposit() -> AbiEvent:
    return event("Depository", "NativeDeposit")


def erc20_deposit() -> AbiEvent:
    return event("Depository", "Erc20Deposit")


def erc20_transfer_event() -> AbiEvent:
    return event(ERC20, "Transfer")


def deposit_topics() -> list[str]:
    return [native_deposit().topic, erc20_deposit().topic]


def to_hex(value: Any) -> str:
    """0x-hex of HexBytes/bytes, or the string as it is."""
    return value if isinstance(value, str) else "0x" + bytes(value).hex()


def logged_deposit(
    log: Any,
    order_id: bytes,
    *,
    depositor: str,
    currency: str,
    amount: int,
    paid_to: str = DEPOSITORY,
) -> DepositLog:
    """The deposit `log` records, where that log stands in the chain."""
    return DepositLog(
        tx_hash=to_hex(log["transactionHash"]),
        log_index=int(log["logIndex"]),
        block_number=int(log["blockNumber"]),
        block_hash=to_hex(log["blockHash"]),
        order_id="0x" + order_id.hex(),
        depositor=depositor,
        currency=currency,
        amount=amount,
        paid_to=paid_to,
    )


def decode_deposit(log: Any) -> DepositLog | None:
    """A DepositLog for a NativeDeposit or Erc20Deposit log; None for any other log."""
    topics = [to_hex(topic) for topic in log["topics"]]
    if not topics:
        return None
    data = bytes.fromhex(to_hex(log["data"])[2:])
    if topics[0] == native_deposit().topic:
        depositor, amount, order_id = native_deposit().decode_data(data)
        currency = NATIVE_EVM_ADDRESS
    elif topics[0] == erc20_deposit().topic:
        depositor, currency, amount, order_id = erc20_deposit().decode_data(data)
    else:
        return None
    return logged_deposit(
        log,
        bytes(order_id),
        depositor=str(depositor).lower(),
        currency=str(currency).lower(),
        amount=int(amount),
    )


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
    if tx_input[:4] != function(ERC20, "transfer").selector:
        return None
    order_id = tx_input[-32:]
    if order_id[:16] == bytes(16):
        return None
    topics = [to_hex(topic) for topic in log["topics"]]
    (amount,) = erc20_transfer_event().decode_data(bytes.fromhex(to_hex(log["data"])[2:]))
    return logged_deposit(
        log, order_id, depositor="0x" + topics[1][-40:], currency=token, amount=int(amount)
    )


@dataclass(frozen=True)
class TokenTransfer:
    """An ERC-20 `Transfer` log."""

    token: str
    sender: str
    to: str
    amount: int
    tx_hash: str
    log_index: int
    block_number: int
    block_hash: str


def decode_transfer(log: Any) -> TokenTransfer | None:
    topics = [to_hex(topic) for topic in log["topics"]]
    if len(topics) != 3 or topics[0] != erc20_transfer_event().topic:
        return None
    (amount,) = erc20_transfer_event().decode_data(bytes.fromhex(to_hex(log["data"])[2:]))
    return TokenTransfer(
        token=to_hex(log["address"]).lower(),
        sender="0x" + topics[1][-40:],
        to="0x" + topics[2][-40:],
        amount=int(amount),
        tx_hash=to_hex(log["transactionHash"]),
        log_index=int(log["logIndex"]),
        block_number=int(log["blockNumber"]),
        block_hash=to_hex(log["blockHash"]),
    )
