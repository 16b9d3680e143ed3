"""`Client`: `AsyncClient` for code without an event loop. The async client runs on a loop
of its own in a background thread; each method hands it the call and waits for the answer,
so both clients are one implementation (callbacks run on that thread)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Coroutine, Iterator, Mapping
from types import TracebackType
from typing import Any, Self, TypeVar, Unpack

from crossfill_client._async_client import DEFAULT_BASE_URL, AsyncClient, ClientOptions
from crossfill_client._execution.runner import ExecutionOptions, ExecutionResult
from crossfill_client._waiting import StatusCallback, WaitOptions
from crossfill_client.models import (
    AppFeeBalances,
    Attestation,
    Chain,
    GaslessAccepted,
    GaslessExecution,
    Quote,
    QuoteRequest,
    RequestFilters,
    RequestPage,
    RequestRecord,
    StatusRecord,
    WonOrder,
)
from crossfill_client.progress import ProgressCallback
from crossfill_client.signers import Signer

Result = TypeVar("Result")
Item = TypeVar("Item")


async def _next(items: AsyncIterator[Item]) -> Item:
    return await anext(items)


class _LoopThread:
    """An event loop running in a daemon thread, for coroutines handed to it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, Result]) -> Result:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()


class Client:
    """The blocking client: the same calls as `AsyncClient`, with the same arguments."""

    def __init__(self, base_url: str = DEFAULT_BASE_URL, **options: Unpack[ClientOptions]) -> None:
        self._portal = _LoopThread()
        self._client = AsyncClient(base_url, **options)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._portal.run(self._client.aclose())
        self._portal.stop()

    def chains(self) -> tuple[Chain, ...]:
        return self._portal.run(self._client.chains())

    def won_orders(self, solver: str) -> tuple[WonOrder, ...]:
        return self._portal.run(self._client.won_orders(solver))

    def rpc_urls(self) -> dict[int, str]:
        return self._portal.run(self._client.rpc_urls())

    def quote(self, request: QuoteRequest) -> Quote:
        return self._portal.run(self._client.quote(request))

    def status(self, request_id: str) -> StatusRecord:
        return self._portal.run(self._client.status(request_id))

    def wait(
        self,
        request_id: str,
        options: WaitOptions | None = None,
        *,
        on_status: StatusCallback | None = None,
    ) -> StatusRecord:
        return self._portal.run(self._client.wait(request_id, options, on_status=on_status))

    def request_page(
        self, filters: RequestFilters | None = None, continuation: str | None = None
    ) -> RequestPage:
        return self._portal.run(self._client.request_page(filters, continuation))

    def requests(self, filters: RequestFilters | None = None) -> Iterator[RequestRecord]:
        records = self._client.requests(filters)
        while True:
            try:
                yield self._portal.run(_next(records))
            except StopAsyncIteration:
                return

    def attestation(self, request_id: str) -> Attestation:
        return self._portal.run(self._client.attestation(request_id))

    def app_fees(self, wallet: str) -> AppFeeBalances:
        return self._portal.run(self._client.app_fees(wallet))

    def execute_gasless(self, execution: GaslessExecution) -> GaslessAccepted:
        return self._portal.run(self._client.execute_gasless(execution))

    def execute(
        self,
        quote: Quote,
        signer: Signer,
        *,
        rpc_urls: Mapping[int, str],
        on_progress: ProgressCallback | None = None,
        options: ExecutionOptions | None = None,
    ) -> ExecutionResult:
        return self._portal.run(
            self._client.execute(
                quote, signer, rpc_urls=rpc_urls, on_progress=on_progress, options=options
            )
        )
