"""Decode the ERC-7683 origin settler's `Open` events into `domain.erc7683.OpenedOrder`."""

from __future__ import annotations

from typing import Any

from eth_abi.exceptions import DecodingError

from crossfill.contracts.abi import AbiEvent, event
from crossfill.domain.erc7683 import OpenedOrder, OriginData, word_address
from crossfill.kinds.evm.depository_logs import to_hex

ORIGIN_SETTLER = "CrossfillOriginSettler"


def open_event() -> AbiEvent:
    return event(ORIGIN_SETTLER, "Open")


def decode_open(log: Any) -> OpenedOrder | None:
    """The order an `Open` log opened; None for another log, or a resolved order not in
    Crossfill's shape (one input, one output, one fill instruction)."""
    topics = [to_hex(topic) for topic in log["topics"]]
    if len(topics) != 2 or topics[0] != open_event().topic:
        return None
    try:
        ((user, origin_chain, open_deadline, fill_deadline, order_id, spent, received, fills),) = (
            open_event().decode_data(bytes.fromhex(to_hex(log["data"])[2:]))
        )
        if len(spent) != 1 or len(received) != 1 or len(fills) != 1:
            return None
        destination_chain, destination_settler, origin_data = fills[0]
        output = OriginData.decode(bytes(origin_data))
    except (DecodingError, ValueError):
        return None
    input_token, input_amount, _recipient, _chain = received[0]
    return OpenedOrder(
        order_id="0x" + bytes(order_id).hex(),
        user=str(user).lower(),
        origin_chain_id=int(origin_chain),
        open_deadline=int(open_deadline),
        fill_deadline=int(fill_deadline),
        input_token=word_address(input_token),
        input_amount=int(input_amount),
        destination_chain_id=int(destination_chain),
        destination_settler=word_address(destination_settler),
        origin_data=bytes(origin_data),
        output=output,
        tx_hash=to_hex(log["transactionHash"]),
    )
