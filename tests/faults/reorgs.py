"""Reorgs as a real chain has them, made on anvil: the last blocks are replaced, and the
transactions they held go back to the mempool and are mined again in later blocks (same
transactions, new blocks and block hashes)."""

from __future__ import annotations

import contextlib
from typing import Any

from crossfill.devnet.anvil import anvil_rpc
from crossfill.errors import DevnetError


def _rpc(rpc_url: str, method: str, *params: object) -> Any:
    return anvil_rpc(rpc_url, method, list(params))


def reorg_returning_transactions(
    rpc_url: str, depth: int, block_time_seconds: int, *, lost_from: frozenset[str] = frozenset()
) -> int:
    """Replace the last `depth` blocks; their transactions are sent again, except those sent
    by `lost_from` (lower-case addresses): no node put them back, they are gone unless their
    sender sends them again. Mining pauses meanwhile so that no block is mined between
    reading the blocks and replacing them. Returns how many transactions went back to the
    mempool."""
    _rpc(rpc_url, "evm_setIntervalMining", 0)
    try:
        head = int(_rpc(rpc_url, "eth_blockNumber"), 16)
        raw_transactions = [
            _rpc(rpc_url, "eth_getRawTransactionByHash", tx["hash"])
            for number in range(max(1, head - depth + 1), head + 1)
            for tx in _rpc(rpc_url, "eth_getBlockByNumber", hex(number), True)["transactions"]
            if tx["from"].lower() not in lost_from
        ]
        _rpc(rpc_url, "anvil_reorg", min(depth, head), [])
        for raw in raw_transactions:
            # Already back in the pool, or its nonce taken since: as on a real chain.
            with contextlib.suppress(DevnetError):
                _rpc(rpc_url, "eth_sendRawTransaction", raw)
        return len(raw_transactions)
    finally:
        _rpc(rpc_url, "evm_setIntervalMining", block_time_seconds)
