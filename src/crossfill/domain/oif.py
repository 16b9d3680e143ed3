"""The Open Intents Framework's API vocabulary as Crossfill serves it (docs/erc7683.md, "OIF
endpoints"): its order types, lock kinds and statuses, what a Crossfill request's status is
in its terms, and its escrow order's typed data read back into Crossfill's gasless ERC-7683
order."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, Final

from eth_abi.exceptions import DecodingError
from eth_utils.address import to_checksum_address

from crossfill.domain.erc7683 import (
    ORDER_DATA_TYPE,
    OUTPUT_NOT_COVERED,
    TOO_LATE,
    UNSERVED,
    CrossfillOrderData,
)
from crossfill.domain.erc7683_gasless import (
    ONCHAIN_NONCES,
    PRIMARY_TYPE,
    SETTLER_NAME,
    SETTLER_VERSION,
    UINT32_MAX,
    GaslessOrder,
)
from crossfill.domain.status import RequestStatus

# The order type Crossfill answers and takes: an escrow order, its typed data the settler's.
ESCROW_ORDER: Final = "oif-escrow-v0"
ORDER_TYPES: Final = ("oif-escrow-v0", "oif-resource-lock-v0", "oif-3009-v0", "oif-user-open-v0")
LOCK_KINDS: Final = ("the-compact", "rhinestone")
REFUND_AUTOMATIC: Final = "refund-automatic"
PROVIDER: Final = "crossfill"


class OrderStatus(StrEnum):
    """OIF's order status enum."""

    CREATED = "created"
    PENDING = "pending"
    EXECUTED = "executed"
    SETTLED = "settled"
    EXECUTING = "executing"
    SETTLING = "settling"
    FINALIZED = "finalized"
    FAILED = "failed"
    REFUNDED = "refunded"


_STATUSES: Final = {
    RequestStatus.WAITING: OrderStatus.CREATED,
    RequestStatus.DEPOSITING: OrderStatus.PENDING,
    RequestStatus.PENDING: OrderStatus.PENDING,
    RequestStatus.SUBMITTED: OrderStatus.EXECUTED,
    RequestStatus.SUCCESS: OrderStatus.FINALIZED,
    RequestStatus.FAILURE: OrderStatus.FAILED,
    RequestStatus.REFUND: OrderStatus.REFUNDED,
}


def order_status(status: RequestStatus) -> OrderStatus:
    """A request's status as OIF names it: waiting for its opening `created`; opening or
    opened and waiting for its fill `pending`; its fill sent `executed`; filled `finalized`
    (the output is the recipient's, nothing is left to claim); `failed`; `refunded`."""
    return _STATUSES[status]


_REFUSALS: Final = {
    UNSERVED: "the order's destination settler or chain is not one Crossfill fills through",
    TOO_LATE: "the order's fill deadline leaves too little time to fill it",
    OUTPUT_NOT_COVERED: "the order's input, priced now with fees, does not buy its outputAmount",
}


def refusal_words(reason: str) -> str:
    """Why Crossfill would not fill an order (`domain.erc7683.refusal`), in words."""
    return "Crossfill would not fill this order: " + _REFUSALS.get(reason, reason)


class OrderRefused(ValueError):
    """An order Crossfill does not take; the message says why."""


_HEX_WORD = re.compile(r"0x[0-9a-fA-F]{64}", re.ASCII)
_HEX_BYTES = re.compile(r"0x(?:[0-9a-fA-F]{2})*", re.ASCII)
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}", re.ASCII)
_DECIMAL = re.compile(r"[0-9]{1,78}", re.ASCII)
# orderData of one CrossfillOrderData: 7 words; a little room, no more.
MAX_ORDER_DATA_BYTES: Final = 1024


def _field(message: dict[str, Any], name: str) -> Any:
    if name not in message:
        raise OrderRefused(f"payload.message.{name} is missing")
    return message[name]


def _address(message: dict[str, Any], name: str) -> str:
    value = _field(message, name)
    if not isinstance(value, str) or _ADDRESS.fullmatch(value) is None:
        raise OrderRefused(f"payload.message.{name}: not a 20-byte 0x-hex address")
    return to_checksum_address(value)


def _uint(message: dict[str, Any], name: str, bound: int) -> int:
    value = _field(message, name)
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise OrderRefused(f"payload.message.{name}: not an integer")
    if isinstance(value, str):
        if _DECIMAL.fullmatch(value) is None:
            raise OrderRefused(f"payload.message.{name}: not a decimal integer")
        value = int(value)
    if not 0 <= value <= bound:
        raise OrderRefused(f"payload.message.{name}: out of range")
    return value


def _bytes(message: dict[str, Any], name: str, pattern: re.Pattern[str]) -> bytes:
    value = _field(message, name)
    if not isinstance(value, str) or pattern.fullmatch(value) is None:
        raise OrderRefused(f"payload.message.{name}: not 0x-hex of the right length")
    return bytes.fromhex(value[2:])


def escrow_order(
    domain: dict[str, Any], primary_type: str, message: dict[str, Any]
) -> tuple[GaslessOrder, CrossfillOrderData]:
    """The gasless order an escrow order's typed data is, and its decoded order data
    (OrderRefused when it is not a Crossfill order)."""
    if primary_type != PRIMARY_TYPE:
        raise OrderRefused(f"payload.primaryType must be {PRIMARY_TYPE}")
    if domain.get("name") != SETTLER_NAME or domain.get("version") != SETTLER_VERSION:
        raise OrderRefused(
            f"payload.domain must be the {SETTLER_NAME} version {SETTLER_VERSION} domain"
        )
    order_data = _bytes(message, "orderData", _HEX_BYTES)
    if len(order_data) > MAX_ORDER_DATA_BYTES:
        raise OrderRefused("payload.message.orderData is too long")
    order = GaslessOrder(
        origin_settler=_address(message, "originSettler"),
        user=_address(message, "user"),
        nonce=_uint(message, "nonce", ONCHAIN_NONCES - 1),
        origin_chain_id=_uint(message, "originChainId", 2**256 - 1),
        open_deadline=_uint(message, "openDeadline", UINT32_MAX),
        fill_deadline=_uint(message, "fillDeadline", UINT32_MAX),
        order_data_type=_bytes(message, "orderDataType", _HEX_WORD),
        order_data=order_data,
    )
    if order.order_data_type != ORDER_DATA_TYPE:
        raise OrderRefused("payload.message.orderDataType is not Crossfill's order data type")
    try:
        data = CrossfillOrderData.decode(order.order_data)
    except (DecodingError, ValueError):
        raise OrderRefused("payload.message.orderData is not a Crossfill order's data") from None
    chain_id, settler = domain.get("chainId"), domain.get("verifyingContract")
    if str(chain_id) != str(order.origin_chain_id) or not isinstance(settler, str):
        raise OrderRefused("payload.domain must name the order's origin chain and settler")
    if settler.lower() != order.origin_settler.lower():
        raise OrderRefused("payload.domain must name the order's origin chain and settler")
    return order, data
