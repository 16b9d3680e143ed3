"""A JSON-RPC proxy between the service and one anvil chain that misbehaves on demand: HTTP
errors, 429 with Retry-After, dropped connections, delays, a page that is not JSON, for chosen
methods or for all; batch answers in another order than asked (as JSON-RPC allows); batches
refused whole, as providers taking none answer them."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from crossfill.devnet.child_process import free_port

EVERY_METHOD = "*"
# Methods a lagging node behind a load balancer gets to answer (the rest reach the head node).
LAGGING_METHODS = frozenset({"eth_getLogs", "eth_getTransactionReceipt"})


@dataclass
class Fault:
    """What to do instead of forwarding: answer `status` (with `retry_after`), answer 200 with
    `page` (not JSON: a gateway's HTML), drop the connection without an answer, or forward and
    then lose the answer (the node acted, the caller never hears); after `delay_seconds` in
    every case."""

    status: int | None = None
    page: str | None = None
    drop: bool = False
    lose_answer: bool = False
    retry_after: int | None = None
    delay_seconds: float = 0.0


@dataclass
class RpcFaultProxy:
    upstream: str
    port: int = field(default_factory=free_port)
    # JSON-RPC method (or EVERY_METHOD) -> the fault a request calling it meets.
    faults: dict[str, Fault] = field(default_factory=dict)
    faulted: int = 0
    # A node this many blocks behind answers every request that asks for logs or receipts
    # (and everything else in the same batch): logs clamped to its head, later blocks and
    # receipts unknown. 0: no lagging node.
    lag_blocks: int = 0
    # With `lag_blocks`: the lagging node answers everything (a node stuck behind: a stale
    # head), not only the requests for logs and receipts.
    lag_everything: bool = False
    lagged: int = 0
    # The highest block whose logs the lagging node was asked for.
    lagged_log_block: int = -1
    # Batches answered last call first (JSON-RPC 2.0 lets a server answer in any order).
    reverse_batches: bool = False
    # Every batch answered with one error for the whole array, as a provider taking no
    # batches answers it.
    refuse_batches: bool = False
    batches_refused: int = 0
    # A provider's limit on requests a second (0: none): the rest of each second's are
    # answered 429 with Retry-After: 1.
    max_requests_per_second: int = 0
    rate_limited: int = 0
    _this_second: tuple[int, int] = (0, 0)  # (the second, requests in it)
    # A provider's cap on the blocks one eth_getLogs may cover (0: none): a call over more is
    # answered with an error, as such providers answer.
    max_log_blocks: int = 0
    refused_log_queries: int = 0
    # JSON-RPC method -> how many calls of it reached the proxy.
    calls: Counter[str] = field(default_factory=Counter)
    _loop: asyncio.AbstractEventLoop | None = None
    _runner: web.AppRunner | None = None
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def fail(self, method: str, fault: Fault) -> None:
        self.faults[method] = fault

    def heal(self) -> None:
        """Every fault off, lagging included."""
        self.faults.clear()
        self.lag_blocks = 0
        self.lag_everything = False
        self.reverse_batches = False
        self.refuse_batches = False
        self.max_requests_per_second = 0
        self.max_log_blocks = 0

    def _fault_for(self, body: bytes) -> Fault | None:
        try:
            document = json.loads(body)
        except ValueError:
            return None
        calls = document if isinstance(document, list) else [document]
        self.calls.update(c.get("method", "") for c in calls if isinstance(c, dict))
        for call in calls:
            method = call.get("method") if isinstance(call, dict) else None
            for key in (method, EVERY_METHOD):
                if key in self.faults:
                    return self.faults[key]
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        refusal = self._provider_refusal(body)
        if refusal is not None:
            return refusal
        if self.lag_blocks and self._asks_lagging_node(body):
            self.lagged += 1
            return web.json_response(await self._lagging_answer(json.loads(body)))
        fault = self._fault_for(body)
        if fault is not None:
            self.faulted += 1
            await asyncio.sleep(fault.delay_seconds)
            if fault.lose_answer:
                await self._forward(body)
            if fault.drop or fault.lose_answer:
                assert request.transport is not None
                request.transport.close()
                return web.Response()
            if fault.page is not None:
                return web.Response(text=fault.page, content_type="text/html")
            if fault.status is not None:
                headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after else {}
                return web.Response(status=fault.status, text="fault injected", headers=headers)
        status, answer = await self._forward(body)
        if self.max_log_blocks:
            answer = self._cap_log_ranges(body, answer)
        if self.reverse_batches and answer.startswith(b"["):
            answer = json.dumps(json.loads(answer)[::-1]).encode()
        return web.Response(body=answer, status=status, content_type="application/json")

    def _provider_refusal(self, body: bytes) -> web.Response | None:
        """The provider's own refusals, before any node is asked: over its rate limit, or a
        batch where it takes none."""
        if self._over_rate_limit():
            self.rate_limited += 1
            return web.Response(status=429, text="rate limited", headers={"Retry-After": "1"})
        if self.refuse_batches and body.lstrip().startswith(b"["):
            self.batches_refused += 1
            return web.json_response(_BATCH_REFUSAL)
        return None

    def _over_rate_limit(self) -> bool:
        if not self.max_requests_per_second:
            return False
        second, requests = self._this_second
        now = int(time.monotonic())
        requests = requests + 1 if now == second else 1
        self._this_second = (now, requests)
        return requests > self.max_requests_per_second

    def _cap_log_ranges(self, body: bytes, answer: bytes) -> bytes:
        """`answer` with each eth_getLogs over more than `max_log_blocks` blocks refused."""
        asked, answered = json.loads(body), json.loads(answer)
        calls = asked if isinstance(asked, list) else [asked]
        replies = answered if isinstance(answered, list) else [answered]
        too_wide = {
            call["id"]
            for call in calls
            if call.get("method") == "eth_getLogs" and _log_blocks(call) > self.max_log_blocks
        }
        if not too_wide:
            return answer
        self.refused_log_queries += len(too_wide)
        refusal = {"code": -32005, "message": f"query exceeds {self.max_log_blocks} blocks"}
        capped = [
            {"jsonrpc": "2.0", "id": reply["id"], "error": refusal}
            if reply.get("id") in too_wide
            else reply
            for reply in replies
        ]
        return json.dumps(capped if isinstance(answered, list) else capped[0]).encode()

    def _asks_lagging_node(self, body: bytes) -> bool:
        if self.lag_everything:
            return True
        try:
            document = json.loads(body)
        except ValueError:
            return False
        calls = document if isinstance(document, list) else [document]
        return any(isinstance(c, dict) and c.get("method") in LAGGING_METHODS for c in calls)

    async def _call(self, method: str, params: list[object]) -> object:
        request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        _, answer = await self._forward(json.dumps(request).encode())
        return json.loads(answer).get("result")

    async def _lagging_answer(self, document: Any) -> Any:
        """What a node `lag_blocks` behind the upstream's head answers."""
        head = await self._call("eth_blockNumber", [])
        assert isinstance(head, str)
        own_head = max(0, int(head, 16) - self.lag_blocks)
        calls = document if isinstance(document, list) else [document]
        answers = []
        for call in calls:
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": call.get("id")}
            try:
                answer["result"] = await self._lagging_result(
                    call["method"], call.get("params", []), own_head
                )
            except _UnknownBlock as unknown:
                answer["error"] = {"code": -32000, "message": str(unknown)}
            answers.append(answer)
        return answers if isinstance(document, list) else answers[0]

    async def _lagging_result(self, method: str, params: list[object], own_head: int) -> object:
        if method == "eth_blockNumber":
            return hex(own_head)
        if method == "eth_getBlockByNumber":
            tag = params[0]
            number = own_head if tag == "latest" else int(str(tag), 16)
            if number > own_head:
                return None
            return await self._call(method, [hex(number), *params[1:]])
        if method == "eth_getLogs":
            query = dict(params[0])  # type: ignore[call-overload]
            if "blockHash" in query:
                block = await self._call("eth_getBlockByHash", [query["blockHash"], False])
                number = int(block["number"], 16) if isinstance(block, dict) else -1
                self.lagged_log_block = max(self.lagged_log_block, number)
                if not 0 <= number <= own_head:
                    raise _UnknownBlock("unknown block")
                return await self._call(method, [query])
            self.lagged_log_block = max(self.lagged_log_block, int(query["toBlock"], 16))
            if int(query["fromBlock"], 16) > own_head:
                return []
            query["toBlock"] = hex(min(own_head, int(query["toBlock"], 16)))
            return await self._call(method, [query])
        if method == "eth_getTransactionReceipt":
            receipt = await self._call(method, params)
            if isinstance(receipt, dict) and int(receipt["blockNumber"], 16) > own_head:
                return None
            return receipt
        return await self._call(method, params)

    async def _forward(self, body: bytes) -> tuple[int, bytes]:
        async with (
            aiohttp.ClientSession() as session,
            session.post(
                self.upstream, data=body, headers={"Content-Type": "application/json"}
            ) as reply,
        ):
            return reply.status, await reply.read()

    def start(self) -> RpcFaultProxy:
        started = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            app = web.Application()
            app.router.add_post("/", self._handle)
            self._runner = web.AppRunner(app)
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", self.port)
            loop.run_until_complete(site.start())
            started.set()
            loop.run_forever()
            loop.run_until_complete(self._runner.cleanup())
            loop.close()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        if not started.wait(10):
            raise RuntimeError("RPC fault proxy did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)

    def wait_for_faults(self, count: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.faulted < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.faulted >= count


_BATCH_REFUSAL = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "batch requests are not supported"},
}


class _UnknownBlock(Exception):
    """What a node answers for a block it does not have, asked by its hash."""


def _log_blocks(call: dict[str, Any]) -> int:
    """How many blocks an eth_getLogs call covers (hex numbers only; tags count as one)."""
    query = call["params"][0]
    bounds = [query.get("fromBlock"), query.get("toBlock")]
    if not all(isinstance(bound, str) and bound.startswith("0x") for bound in bounds):
        return 1
    return int(bounds[1], 16) - int(bounds[0], 16) + 1
