"""The client over an injected transport (`httpx.MockTransport`): retries as the policy says,
errors mapped, the listing walked page by page, the blocking client the same as the async
one."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from conftest import recorded
from crossfill_client import (
    AsyncClient,
    AttestationError,
    Client,
    ExecuteError,
    QuoteError,
    QuoteRequest,
    RateLimited,
    RequestFilters,
    RequestStatus,
    RetryPolicy,
    TransportError,
    WaitOptions,
)
from crossfill_client.models import GaslessExecution, RawCall

Handler = Callable[[httpx.Request], httpx.Response]
POLICY = RetryPolicy(attempts=3, backoff_base=1.0, jitter=0.0)
STATUS_ID = "0x" + "ab" * 32


class Script:
    """Answers requests in order and remembers them; the waits asked for, without waiting."""

    def __init__(self, *answers: httpx.Response | Exception) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []
        self.slept: list[float] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    def client(self, api_key: str | None = None) -> AsyncClient:
        return AsyncClient(
            "http://service.test",
            api_key=api_key,
            retry=POLICY,
            transport=httpx.MockTransport(self),
            sleep=self.sleep,
        )


def _status(status: str = "success") -> httpx.Response:
    record = recorded("status_success")
    assert isinstance(record, dict)
    return httpx.Response(200, json={**record, "status": status})


async def test_rate_limit_waits_what_the_service_asked_then_succeeds() -> None:
    script = Script(httpx.Response(429, headers={"Retry-After": "2"}, json={"message": "slow"}),
                    _status())  # fmt: skip
    async with script.client() as client:
        record = await client.status(STATUS_ID)
    assert record.status == "success"
    assert script.slept == [2.0]


async def test_server_errors_and_broken_connections_back_off_exponentially() -> None:
    script = Script(httpx.Response(503, json={"message": "busy"}),
                    httpx.ReadError("reset"), _status())  # fmt: skip
    async with script.client() as client:
        await client.status(STATUS_ID)
    assert script.slept == [1.0, 2.0]


async def test_attempts_run_out_into_the_typed_error() -> None:
    limited = httpx.Response(429, headers={"Retry-After": "1"}, json={"message": "slow"})
    script = Script(limited, limited, limited)
    async with script.client() as client:
        with pytest.raises(RateLimited) as raised:
            await client.status(STATUS_ID)
    assert raised.value.retry_after == 1.0 and len(script.requests) == 3
    unreachable = Script(*(httpx.ConnectError("refused") for _ in range(3)))
    async with unreachable.client() as client:
        with pytest.raises(TransportError):
            await client.chains()


async def test_a_client_error_is_not_retried() -> None:
    script = Script(httpx.Response(400, json=recorded("quote_error_coded")))
    async with script.client() as client:
        with pytest.raises(QuoteError) as raised:
            await client.quote(_quote_request())
    assert raised.value.error_code == "UNSUPPORTED_CHAIN" and len(script.requests) == 1


async def test_a_gasless_execution_is_not_repeated_once_it_may_have_arrived() -> None:
    script = Script(httpx.Response(500, json={"error": "Internal server error"}))
    async with script.client(api_key="cfk_test") as client:
        with pytest.raises(ExecuteError) as raised:
            await client.execute_gasless(_gasless())
    assert raised.value.status_code == 500 and len(script.requests) == 1
    assert script.requests[0].headers["x-api-key"] == "cfk_test"
    # Never sent: safe to send again.
    accepted = httpx.Response(200, json={"message": "ok", "requestId": STATUS_ID})
    retried = Script(httpx.ConnectError("refused"), accepted)
    async with retried.client(api_key="cfk_test") as client:
        assert (await client.execute_gasless(_gasless())).request_id == STATUS_ID


async def test_attestation_refusal_is_an_attestation_error() -> None:
    script = Script(httpx.Response(400, json=recorded("signature_error")))
    async with script.client() as client:
        with pytest.raises(AttestationError) as raised:
            await client.attestation(STATUS_ID)
    assert raised.value.code == "REQUEST_NOT_DEPOSITED"
    assert script.requests[0].url.path == f"/requests/{STATUS_ID}/signature"


async def test_wait_ends_at_a_final_status_or_at_the_ones_asked_for() -> None:
    polled = WaitOptions(poll_interval=0, use_websocket=False)
    script = Script(_status("pending"), _status("failure"))
    async with script.client() as client:
        assert (await client.wait(STATUS_ID, polled)).status is RequestStatus.FAILURE
    # Past the failure to the refund that follows it.
    script = Script(_status("pending"), _status("failure"), _status("refund"))
    seen: list[RequestStatus] = []
    async with script.client() as client:
        record = await client.wait(
            STATUS_ID,
            WaitOptions(
                poll_interval=0, use_websocket=False, until=frozenset({RequestStatus.REFUND})
            ),
            on_status=lambda record: seen.append(record.status),
        )
    assert record.status is RequestStatus.REFUND and len(script.requests) == 3
    assert seen == [RequestStatus.PENDING, RequestStatus.FAILURE, RequestStatus.REFUND]


def _listing_page(ids: list[str], continuation: str | None) -> httpx.Response:
    page = recorded("requests_page")
    assert isinstance(page, dict) and isinstance(page["requests"], list)
    template = page["requests"][0]
    assert isinstance(template, dict)
    body: dict[str, object] = {"requests": [{**template, "id": id_} for id_ in ids]}
    if continuation is not None:
        body["continuation"] = continuation
    return httpx.Response(200, json=body)


def test_blocking_client_walks_the_listing_by_its_cursor() -> None:
    script = Script(_listing_page(["0x01", "0x02"], "next"), _listing_page(["0x03"], None))
    with Client("http://service.test", api_key="cfk_test",
                transport=httpx.MockTransport(script)) as client:  # fmt: skip
        ids = [record.id for record in client.requests(RequestFilters(limit=2))]
    assert ids == ["0x01", "0x02", "0x03"]
    first, second = (request.url.params for request in script.requests)
    assert first["limit"] == "2" and "continuation" not in first
    assert second["continuation"] == "next"


def _quote_request() -> QuoteRequest:
    return QuoteRequest(user="0x" + "11" * 20, origin_chain_id=1, destination_chain_id=999,
                        origin_currency="0x" + "00" * 20, destination_currency="0x" + "00" * 20,
                        amount=1)  # fmt: skip


def _gasless() -> GaslessExecution:
    return GaslessExecution(data=RawCall(chain_id=1, to="0x" + "11" * 20, data="0x"))
