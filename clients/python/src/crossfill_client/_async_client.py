"""`AsyncClient`: every call of the interface, and `execute`, on asyncio."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from types import TracebackType
from typing import Self, TypedDict, Unpack

import httpx

from crossfill_client._error_mapping import ErrorFamily
from crossfill_client._execution.runner import ExecutionOptions, ExecutionResult, StepRunner
from crossfill_client._http import ServiceHttp, Sleep
from crossfill_client._retry import RetryPolicy
from crossfill_client._waiting import StatusCallback, WaitOptions, status_path, wait_for_request
from crossfill_client.models import (
    AppFeeBalances,
    Attestation,
    Chain,
    ChainList,
    GaslessAccepted,
    GaslessExecution,
    Quote,
    QuoteRequest,
    RequestFilters,
    RequestPage,
    RequestRecord,
    StatusRecord,
    WonOrder,
    WonOrderList,
)
from crossfill_client.progress import ProgressCallback
from crossfill_client.signers import Signer

DEFAULT_BASE_URL = "http://127.0.0.1:8000"


class ClientOptions(TypedDict, total=False):
    """What both clients take beside the base URL: `api_key` (sent as `x-api-key`),
    `timeout` (seconds per HTTP call, default 30), `retry` (default `RetryPolicy()`),
    `transport` and `chain_transport` (httpx transports to the service and to chain nodes:
    seams for tests)."""

    api_key: str | None
    timeout: float
    retry: RetryPolicy | None
    transport: httpx.AsyncBaseTransport | None
    chain_transport: httpx.AsyncBaseTransport | None


class AsyncClient:
    """A client of one service. `api_key` is sent as `x-api-key` (required by `requests` and
    `execute_gasless`); `retry` governs every call to the service and to chain nodes;
    `transport` and `chain_transport` are seams for tests (httpx transports)."""

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        sleep: Sleep = asyncio.sleep,
        **options: Unpack[ClientOptions],
    ) -> None:
        timeout = options.get("timeout", 30.0)
        self._service = ServiceHttp(
            base_url,
            api_key=options.get("api_key"),
            timeout=timeout,
            retry=options.get("retry") or RetryPolicy(),
            transport=options.get("transport"),
            sleep=sleep,
        )
        self._chain_http = httpx.AsyncClient(
            timeout=timeout, transport=options.get("chain_transport")
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._service.aclose()
        await self._chain_http.aclose()

    async def chains(self) -> tuple[Chain, ...]:
        """Every chain the service serves (`GET /chains`)."""
        return (await self._service.read(ChainList, "GET", "/chains")).chains

    async def won_orders(self, solver: str) -> tuple[WonOrder, ...]:
        """The paid orders the external solver `solver` won and has not filled, with their
        fill terms (`GET /solvers/{address}/orders`)."""
        path = f"/solvers/{solver}/orders"
        return (await self._service.read(WonOrderList, "GET", path)).orders

    async def rpc_urls(self) -> dict[int, str]:
        """Each chain's RPC URL as the service publishes it (the perps exchange's: its API),
        for `execute` when the caller has no nodes of its own."""
        return {chain.id: chain.http_rpc_url for chain in await self.chains()}

    async def quote(self, request: QuoteRequest) -> Quote:
        """An executable quote (`POST /quote/v2`); a refusal is a `QuoteError`."""
        return await self._service.read(
            Quote, "POST", "/quote/v2", family=ErrorFamily.QUOTE, json=request.wire()
        )

    async def status(self, request_id: str) -> StatusRecord:
        """The request's status record (`GET /intents/status/v3`)."""
        return await self._service.read(StatusRecord, "GET", status_path(request_id))

    async def wait(
        self,
        request_id: str,
        options: WaitOptions | None = None,
        *,
        on_status: StatusCallback | None = None,
    ) -> StatusRecord:
        """The request's status record once it has ended (success, failure or refund; or
        once it has one of `options.until`), followed on the service's websocket, or by
        polling the status path when the websocket cannot be had; `WaitTimeout` after
        `options.timeout` seconds (default 600). `on_status` sees each status on the way."""
        return await wait_for_request(
            self._service, request_id, options or WaitOptions(), on_status=on_status
        )

    async def request_page(
        self, filters: RequestFilters | None = None, continuation: str | None = None
    ) -> RequestPage:
        """One page of `GET /requests/v3` (an API key is required)."""
        params = (filters or RequestFilters()).query(continuation)
        return await self._service.read(RequestPage, "GET", "/requests/v3", params=params)

    async def requests(self, filters: RequestFilters | None = None) -> AsyncIterator[RequestRecord]:
        """Every request matching `filters`, page after page (`filters.limit` per page)."""
        continuation: str | None = None
        while True:
            page = await self.request_page(filters, continuation)
            for record in page.requests:
                yield record
            if page.continuation is None or not page.requests:
                return
            continuation = page.continuation

    async def attestation(self, request_id: str) -> Attestation:
        """The solver's signature of the request's deposit (`GET /requests/{id}/signature`);
        an `AttestationError` (`code` `REQUEST_NOT_DEPOSITED`, ...) until there is one."""
        return await self._service.read(
            Attestation, "GET", f"/requests/{request_id}/signature", family=ErrorFamily.ATTESTATION
        )

    async def app_fees(self, wallet: str) -> AppFeeBalances:
        """The wallet's owed app fees (`GET /app-fees/{wallet}/balances`)."""
        return await self._service.read(AppFeeBalances, "GET", f"/app-fees/{wallet}/balances")

    async def execute_gasless(self, execution: GaslessExecution) -> GaslessAccepted:
        """Have the service's gas sponsor send a call (`POST /execute`, API key required);
        follow the answer's `request_id` with `wait`. Not tried again once it may have reached
        the service (it is not safe to repeat)."""
        return await self._service.read(
            GaslessAccepted,
            "POST",
            "/execute",
            family=ErrorFamily.EXECUTE,
            idempotent=False,
            json=execution.wire(),
        )

    async def execute(
        self,
        quote: Quote,
        signer: Signer,
        *,
        rpc_urls: Mapping[int, str],
        on_progress: ProgressCallback | None = None,
        options: ExecutionOptions | None = None,
    ) -> ExecutionResult:
        """Carry out the quote's steps in order with `signer`'s wallets: transactions sent
        through `rpc_urls` (per chain id; the perps exchange's API URL for its actions) and
        waited for, signatures posted where the item says; after an item with a check, the
        request followed to its end (unless `options.wait_for_fill` is False). A request that
        ends in failure or refund raises `RequestFailed`."""
        runner = StepRunner(
            self._service,
            self._chain_http,
            signer,
            rpc_urls,
            options or ExecutionOptions(),
            on_progress,
        )
        return await runner.run(quote)
