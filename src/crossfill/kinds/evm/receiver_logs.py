"""Decode the Receiver's `FundsForwardedWithData` into a deposit (protocol v1).

The event names neither sender nor amount: both come from the transaction, so only a
transaction sent straight to the Receiver counts (its value is what was forwarded, its sender
the depositor). The forwarded data must be exactly an order id; ids starting with 16 zero bytes
are ignored, as for tagged transfers into the Depository.
"""

from __future__ import annotations

from typing import Any

from crossfill.contracts.abi import AbiEvent, event, function
from crossfill.kinds.evm.client import TransactionFacts
from crossfill.kinds.evm.depository_logs import RECEIVER, DepositLog, logged_deposit, to_hex
from crossfill.types import NATIVE_EVM_ADDRESS

ORDER_ID_BYTES = 32


def forwarded_event() -> AbiEvent:
    return event("Receiver", "FundsForwardedWithData")


def is_forwarded(log: Any, receiver: str) -> bool:
    topics = log["topics"]
    return (
        to_hex(log["address"]).lower() == receiver.lower()
        and bool(topics)
        and to_hex(topics[0]) == forwarded_event().topic
    )


def _forwarded_data(tx: TransactionFacts) -> bytes:
    """What the Receiver forwarded with the transaction's value: the calldata of its fallback,
    or the argument of `forward(bytes)`."""
    forward = function("Receiver", "forward")
    if tx.data[:4] == forward.selector:
        (data,) = forward.decode_arguments(tx.data[4:])
        return bytes(data)
    return tx.data


def decode_receiver_deposit(log: Any, tx: TransactionFacts, receiver: str) -> DepositLog | None:
    """A DepositLog for a native deposit paid through the Receiver; None for any other log, a
    call through another contract, or data that is not an order id."""
    if not is_forwarded(log, receiver) or tx.to != receiver.lower() or tx.value <= 0:
        return None
    (logged,) = forwarded_event().decode_data(bytes.fromhex(to_hex(log["data"])[2:]))
    order_id = bytes(logged)
    if order_id != _forwarded_data(tx) or len(order_id) != ORDER_ID_BYTES:
        return None
    if order_id[:16] == bytes(16):
        return None
    return logged_deposit(
        log,
        order_id,
        depositor=tx.sender,
        currency=NATIVE_EVM_ADDRESS,
        amount=tx.value,
        paid_to=RECEIVER,
    )
