"""What the fill bench sees of a chain, over the chain's own websocket (web3's AsyncWeb3 +
WebSocketProvider): when each block arrived, when each pending transaction arrived, and raw
JSON-RPC over HTTP for everything else. Arrival times are `time.perf_counter()`."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from web3 import AsyncWeb3, WebSocketProvider


class RpcFailed(RuntimeError):
    pass


async def rpc(session: aiohttp.ClientSession, url: str, method: str, params: list[Any]) -> Any:
    """One raw JSON-RPC call over HTTP: what a bare client pays for a round trip."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    async with session.post(url, json=body) as reply:
        answer = await reply.json()
    if "error" in answer:
        raise RpcFailed(f"{method}: {answer['error']}")
    return answer.get("result")


async def rpc_batch(
    session: aiohttp.ClientSession, url: str, method: str, params: list[list[Any]]
) -> list[Any]:
    """`method` called once per parameter list, in one JSON-RPC batch; the results in order."""
    if not params:
        return []
    body = [
        {"jsonrpc": "2.0", "id": index, "method": method, "params": one}
        for index, one in enumerate(params)
    ]
    async with session.post(url, json=body) as reply:
        answers = await reply.json()
    by_id = {answer["id"]: answer for answer in answers}
    failed = [answer["error"] for answer in answers if "error" in answer]
    if failed:
        raise RpcFailed(f"{method}: {len(failed)} of {len(params)} failed: {failed[0]}")
    return [by_id[index].get("result") for index in range(len(params))]


@dataclass
class ChainWatch:
    http_url: str
    session: aiohttp.ClientSession
    # block number -> when its head arrived
    heads: dict[int, float] = field(default_factory=dict)
    # transaction hash -> when it arrived in the pending pool
    pending: dict[str, float] = field(default_factory=dict)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def changed(self) -> None:
        """Until the next head or pending transaction arrives."""
        self._changed.clear()
        await self._changed.wait()

    async def receipt(self, tx_hash: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = await rpc(
            self.session, self.http_url, "eth_getTransactionReceipt", [tx_hash]
        )
        return found

    async def mined_at(self, tx_hash: str) -> tuple[int, float]:
        """The block that holds the transaction, and when that block's head arrived."""
        while True:
            receipt = await self.receipt(tx_hash)
            if receipt is not None:
                number = int(receipt["blockNumber"], 16)
                return number, await self.head_at(number)
            await self.changed()

    async def head_at(self, number: int) -> float:
        """When the head of block `number` arrived (once it has)."""
        while number not in self.heads:
            await self.changed()
        return self.heads[number]

    async def first_pending(self, after: float, ignore: set[str]) -> tuple[str, float]:
        while True:
            arrived = [
                (at, tx_hash)
                for tx_hash, at in self.pending.items()
                if at >= after and tx_hash not in ignore
            ]
            if arrived:
                at, tx_hash = min(arrived)
                return tx_hash, at
            await self.changed()


@contextlib.asynccontextmanager
async def watching(
    ws_url: str, http_url: str, session: aiohttp.ClientSession, *, pending: bool
) -> AsyncIterator[ChainWatch]:
    watch = ChainWatch(http_url, session)
    async with AsyncWeb3(WebSocketProvider(ws_url)) as web3:
        heads = await web3.eth.subscribe("newHeads")
        if pending:
            await web3.eth.subscribe("newPendingTransactions")

        async def listen() -> None:
            async for message in web3.socket.process_subscriptions():
                arrived = time.perf_counter()
                result = message["result"]
                if message["subscription"] == heads:
                    watch.heads[int(result["number"])] = arrived
                else:
                    tx_hash = result if isinstance(result, str) else "0x" + bytes(result).hex()
                    watch.pending.setdefault(tx_hash, arrived)
                watch._changed.set()

        listener = asyncio.create_task(listen())
        try:
            yield watch
        finally:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener
