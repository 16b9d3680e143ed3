"""A JSON-RPC proxy between the service and one anvil chain that misbehaves on demand: HTTP
errors, 429 with Retry-After, dropped connections, delays, for chosen methods or for all."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

from crossfill.devnet.anvil import free_port

EVERY_METHOD = "*"


@dataclass
class Fault:
    """What to do instead of forwarding: answer `status` (with `retry_after`), drop the
    connection without an answer, or forward and then lose the answer (the node acted, the
    caller never hears); after `delay_seconds` in every case."""

    status: int | None = None
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
    _loop: asyncio.AbstractEventLoop | None = None
    _runner: web.AppRunner | None = None
    _thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def fail(self, method: str, fault: Fault) -> None:
        self.faults[method] = fault

    def heal(self) -> None:
        self.faults.clear()

    def _fault_for(self, body: bytes) -> Fault | None:
        try:
            document = json.loads(body)
        except ValueError:
            return None
        calls = document if isinstance(document, list) else [document]
        for call in calls:
            method = call.get("method") if isinstance(call, dict) else None
            for key in (method, EVERY_METHOD):
                if key in self.faults:
                    return self.faults[key]
        return None

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
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
            if fault.status is not None:
                headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after else {}
                return web.Response(status=fault.status, text="fault injected", headers=headers)
        status, answer = await self._forward(body)
        return web.Response(body=answer, status=status, content_type="application/json")

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
