"""Many users' deposits mined together: every quote's origin transactions sent with the
origin chain's automining off, then mined in one block (and one more on top, for the
confirmations), so the service sees them all at once."""

from __future__ import annotations

from typing import Any

from eth_account.signers.local import LocalAccount
from eth_typing import HexStr
from web3 import Web3

from crossfill.devnet.anvil import anvil_rpc
from tests.conftest import RunningDevnet
from tests.e2e.bridging import ORIGIN, rpc_urls
from tests.support.wallets.evm import broadcast_item

# A user and the quote they pay.
Paid = tuple[LocalAccount, dict[str, Any]]


def deposit_all_in_one_block(devnet: RunningDevnet, paid: list[Paid]) -> int:
    """Every item of every quote's steps sent (each user's in order), then mined in one
    origin block; that block's number."""
    url = rpc_urls(devnet)[ORIGIN]
    origin = Web3(Web3.HTTPProvider(url))
    anvil_rpc(url, "evm_setAutomine", [False])
    try:
        hashes = [
            broadcast_item(origin, user, item["data"])
            for user, quote in paid
            for step in quote["steps"]
            for item in step["items"]
        ]
        anvil_rpc(url, "evm_mine", [])
    finally:
        anvil_rpc(url, "evm_setAutomine", [True])
    receipts = [origin.eth.get_transaction_receipt(HexStr(h)) for h in hashes]
    blocks = {receipt["blockNumber"] for receipt in receipts}
    statuses = {receipt["status"] for receipt in receipts}
    assert len(blocks) == 1 and statuses == {1}, (blocks, statuses)
    anvil_rpc(url, "evm_mine", [])
    (block,) = blocks
    return int(block)
