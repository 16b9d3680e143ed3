"""Deposit addresses: a transfer seen at one, and the ids of the child request a later
transfer makes. Pure values; the watcher (`kinds.evm.deposit_addresses`) finds and sweeps them."""

from __future__ import annotations

from dataclasses import dataclass

from eth_utils.crypto import keccak


@dataclass(frozen=True)
class SeenTransfer:
    """A transfer into a deposit address (`log_index` -1 for ether sent by a transaction)."""

    address: str
    tx_hash: str
    log_index: int
    block_number: int
    block_hash: str
    currency: str
    amount: int
    depositor: str


@dataclass(frozen=True)
class ChildIds:
    request_id: str
    order_id: str


def child_ids(
    parent_request_id: str, parent_order_id: str, tx_hash: str, log_index: int, leg: str = "paid"
) -> ChildIds:
    """Ids of the child request a later transfer (or an overpaid one's excess, `leg`) makes:
    derived from the parent and the transfer, so finding the transfer again makes the same
    child."""
    tag = (f"{tx_hash}:{log_index}" + ("" if leg == "paid" else f":{leg}")).encode()
    return ChildIds(
        request_id="0x" + keccak(b"request:" + parent_request_id.encode() + tag).hex(),
        order_id="0x" + keccak(b"order:" + parent_order_id.encode() + tag).hex(),
    )
