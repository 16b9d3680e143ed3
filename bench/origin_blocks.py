"""The origin chain's blocks mined by the bench, so that a burst of deposits lands in one block.

anvil mines on its own timer, and sending hundreds of deposits takes longer than a 250 ms block
(about 0.8 ms each); its timer cannot be paused and resumed at a fraction of a second
(`evm_setIntervalMining` takes whole seconds). So for the whole run the bench stops that timer
and mines the origin's blocks itself, one every `block_time` seconds; a burst is sent between
two of them and mined at once. The destination keeps anvil's own timer."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import aiohttp

from bench.chain_watch import rpc, rpc_batch


@dataclass
class OriginBlocks:
    http: aiohttp.ClientSession
    url: str
    block_time: float
    _mining: asyncio.Lock = field(default_factory=asyncio.Lock)
    _next_due: float = 0.0

    async def one_block(self, raw_transactions: list[str]) -> int:
        """Send these signed transactions and mine them in the next block; its number. Fails
        unless every one of them succeeded in that block."""
        async with self._mining:
            hashes = await rpc_batch(
                self.http, self.url, "eth_sendRawTransaction", [[raw] for raw in raw_transactions]
            )
            await rpc(self.http, self.url, "evm_mine", [])
            self._next_due = asyncio.get_running_loop().time() + self.block_time
        receipts = await rpc_batch(
            self.http, self.url, "eth_getTransactionReceipt", [[tx] for tx in hashes]
        )
        blocks = {int(receipt["blockNumber"], 16) for receipt in receipts}
        failed = sum(receipt["status"] != "0x1" for receipt in receipts)
        if len(blocks) != 1 or failed:
            raise SystemExit(f"the burst spread over blocks {sorted(blocks)}, {failed} reverted")
        return blocks.pop()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        self._next_due = loop.time() + self.block_time
        while True:
            await asyncio.sleep(max(0.0, self._next_due - loop.time()))
            async with self._mining:
                if loop.time() < self._next_due:
                    continue  # a burst was mined meanwhile: the next block is due later
                await rpc(self.http, self.url, "evm_mine", [])
                self._next_due = max(self._next_due + self.block_time, loop.time())


@contextlib.asynccontextmanager
async def origin_blocks(
    http: aiohttp.ClientSession, url: str, block_time: float
) -> AsyncIterator[OriginBlocks]:
    """anvil's timer stopped on the origin at `url`; its blocks mined by the bench meanwhile."""
    await rpc(http, url, "evm_setIntervalMining", [0])
    blocks = OriginBlocks(http, url, block_time)
    miner = asyncio.create_task(blocks._run())
    try:
        yield blocks
    finally:
        miner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await miner
