"""The log scan on an endpoint that refuses JSON-RPC batches: block by block, each block's logs
asked by its hash, the headers linked into one chain; batches tried again after a while."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from crossfill.chains.batching import Batching
from crossfill.chains.transport import JsonRpcProvider
from crossfill.errors import ChainError, ChainUnreachable, NodeBehind, RateLimited
from crossfill.kinds.evm.client import BLOCKS_AT_ONCE, CALLS_IN_FLIGHT, EvmClient, LogFilter
from crossfill.metrics import Metrics
from crossfill.types import ChainId

DEPOSITS = LogFilter(("0x" + "11" * 20,), ("0x" + "aa" * 32,))
TRANSFERS = LogFilter(("0x" + "22" * 20,), ("0x" + "bb" * 32,))
REFUSAL = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no batches"}}


def _hash(number: int, fork: str = "") -> str:
    return "0x" + f"{fork}{number:x}".rjust(64, "0")


@dataclass
class _Chain:
    """A node's chain: blocks by number, and the logs of each filter's address by block."""

    blocks: int
    # Headers from this block on come from another fork, which left this one a block before.
    forked_at: int | None = None
    unknown_hashes: set[str] = field(default_factory=set)  # logs asked by these: refused
    batches: int = 0

    def block(self, number: int) -> dict[str, Any] | None:
        if number >= self.blocks:
            return None
        fork = "f" if self.forked_at is not None and number >= self.forked_at else ""
        return {
            "number": hex(number),
            "timestamp": hex(1_000 + number),
            "hash": _hash(number, fork),
            "parentHash": _hash(number - 1, fork) if number else "0x" + "00" * 32,
        }

    def logs(self, query: dict[str, Any]) -> list[dict[str, Any]]:
        number = int(query["blockHash"][-8:], 16)
        address = query["address"][0]
        # A deposit in every third block, a transfer in every fifth.
        every = 3 if address == DEPOSITS.addresses[0] else 5
        if number % every:
            return []
        return [
            {
                "address": address,
                "blockHash": query["blockHash"],
                "blockNumber": hex(number),
                "logIndex": "0x0",
                "transactionHash": _hash(number),
                "topics": list(query["topics"]),
                "data": "0x",
            }
        ]

    def answer(self, request: Any) -> Any:
        if isinstance(request, list):
            self.batches += 1
            return REFUSAL
        method, params = request["method"], request["params"]
        answer: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        if method == "eth_getBlockByNumber":
            answer["result"] = self.block(int(params[0], 16))
        elif method == "eth_getLogs" and params[0]["blockHash"] in self.unknown_hashes:
            answer["error"] = {"code": -32000, "message": "unknown block"}
        elif method == "eth_getLogs":
            answer["result"] = self.logs(params[0])
        else:
            answer["error"] = {"code": -32601, "message": f"{method} not served here"}
        return answer


class _Provider(JsonRpcProvider):
    """The node's HTTP side: every `limit_every`th single call is answered 429 (a provider's
    calls-a-second limit); with `failing`, every single call meets that instead of the node
    (an HTTP status, or a page that is not JSON); the calls in flight are counted."""

    def __init__(self, chain: _Chain, *, limit_every: int = 0) -> None:
        super().__init__("http://node.invalid", timeout_seconds=1)
        self.chain = chain
        self.limit_every = limit_every
        self.failing: int | bytes | None = None
        self.single_calls = self.rate_limited = self.in_flight = self.most_in_flight = 0

    async def _post(self, body: bytes) -> bytes:
        request = json.loads(body)
        if isinstance(request, dict):
            self.single_calls += 1
            if isinstance(self.failing, bytes):
                return self.failing
            if self.failing is not None:
                raise self._answered(self.failing)
            if self.limit_every and self.single_calls % self.limit_every == 0:
                self.rate_limited += 1
                raise self._answered(429, retry_after="0")
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0)  # other calls may start meanwhile
            return json.dumps(self.chain.answer(request)).encode()
        finally:
            self.in_flight -= 1

    def _answered(self, status: int, **headers: str) -> aiohttp.ClientResponseError:
        info = aiohttp.RequestInfo(URL(self.endpoint_uri), "POST", CIMultiDictProxy(CIMultiDict()))
        named = {name.replace("_", "-").title(): value for name, value in headers.items()}
        return aiohttp.ClientResponseError(
            info, (), status=status, headers=CIMultiDictProxy(CIMultiDict(named))
        )


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _client(
    chain: _Chain,
    clock: _Clock | None = None,
    *,
    limit_every: int = 0,
    metrics: Metrics | None = None,
) -> EvmClient:
    client = EvmClient(
        ChainId(1), "http://node.invalid", timeout_seconds=1, metrics=metrics or Metrics()
    )
    client.web3.provider = _Provider(chain, limit_every=limit_every)
    if clock is not None:
        client.batching = Batching(clock=clock)
    return client


async def test_a_range_is_read_block_by_block_in_order() -> None:
    chain = _Chain(blocks=100)
    client = _client(chain)
    end = 2 * BLOCKS_AT_ONCE + 5  # more than two windows of concurrent reads
    scanned = await client.scan([DEPOSITS, TRANSFERS], 3, end)
    deposits, transfers = scanned.logs
    assert [entry["blockNumber"] for entry in deposits] == list(range(3, end + 1, 3))
    assert [entry["blockNumber"] for entry in transfers] == list(range(5, end + 1, 5))
    assert scanned.end_block.number == end and scanned.end_block.hash == _hash(end)
    assert chain.batches == 1  # refused once, then single calls only


@pytest.mark.parametrize("forked_at", [10, BLOCKS_AT_ONCE])  # in a window, or between two
async def test_headers_from_two_forks_are_no_scan(forked_at: int) -> None:
    """A reorganisation between two header reads: the range is one chain or nothing."""
    client = _client(_Chain(blocks=100, forked_at=forked_at))
    with pytest.raises(ChainError, match="different forks"):
        await client.scan([DEPOSITS], 0, BLOCKS_AT_ONCE + 5)


async def test_logs_refused_for_a_block_the_node_does_not_know_are_node_behind() -> None:
    """The logs' node has not got the block the header came from: nothing may advance."""
    chain = _Chain(blocks=100, unknown_hashes={_hash(12)})
    with pytest.raises(NodeBehind) as behind:
        await _client(chain).scan([DEPOSITS], 10, 14)
    assert behind.value.block_number == 12


async def test_a_block_the_node_has_not_reached_is_node_behind() -> None:
    with pytest.raises(NodeBehind) as behind:
        await _client(_Chain(blocks=10)).scan([DEPOSITS], 5, 12)
    assert behind.value.block_number == 10


async def test_a_batch_is_tried_again_after_a_while() -> None:
    chain, clock = _Chain(blocks=100), _Clock()
    client = _client(chain, clock)
    await client.scan([DEPOSITS], 0, 5)
    await client.scan([DEPOSITS], 6, 9)
    assert chain.batches == 1
    clock.now += client.batching.retry_after_seconds
    scanned = await client.scan([DEPOSITS], 10, 12)
    assert chain.batches == 2
    assert [entry["blockNumber"] for entry in scanned.logs[0]] == [12]


async def test_single_calls_go_a_few_at_a_time() -> None:
    client = _client(_Chain(blocks=100))
    await client.scan([DEPOSITS, TRANSFERS], 0, 2 * BLOCKS_AT_ONCE)
    provider = client.web3.provider
    assert isinstance(provider, _Provider)
    assert 1 < provider.most_in_flight <= CALLS_IN_FLIGHT


async def test_a_call_answered_429_waits_and_goes_again_alone() -> None:
    """One call in seven is refused by the provider's rate limit: the scan still completes,
    each refused call sent again (and counted), not the whole scan failed."""
    metrics = Metrics()
    client = _client(_Chain(blocks=100), limit_every=7, metrics=metrics)
    scanned = await client.scan([DEPOSITS], 0, 40)
    assert [entry["blockNumber"] for entry in scanned.logs[0]] == list(range(0, 41, 3))
    provider = client.web3.provider
    assert isinstance(provider, _Provider) and provider.rate_limited > 5
    counted = {"chain_id": "1", "outcome": "rate_limited"}
    assert (
        sum(
            metrics.registry.get_sample_value(
                "crossfill_rpc_calls_total", {**counted, "call": call}
            )
            or 0
            for call in ("eth_getBlockByNumber", "eth_getLogs")
        )
        == provider.rate_limited
    )


async def test_a_call_answered_429_every_time_fails_as_rate_limited() -> None:
    client = _client(_Chain(blocks=100), limit_every=1)
    with pytest.raises(RateLimited):
        await client.scan([DEPOSITS], 0, 3)


async def test_a_quotes_read_answered_429_fails_at_once() -> None:
    """Only a scan's calls wait out a rate limit: a quote's read of the user's balance is
    not held up by it (the quote goes out without the balance instead)."""
    client = _client(_Chain(blocks=100), limit_every=1)
    client.batching.refused()
    with pytest.raises(RateLimited):
        await client.balance_and_allowance("0x" + "00" * 20, "0x" + "33" * 20, "0x" + "44" * 20)
    provider = client.web3.provider
    assert isinstance(provider, _Provider) and provider.rate_limited == 1


@pytest.mark.parametrize("failing", [502, 503, b"<html>502 Bad Gateway</html>"])
async def test_single_calls_meeting_a_failing_node_are_the_node_unreachable(
    failing: int | bytes,
) -> None:
    """A 5xx or a gateway's page to a scan's single call is the chain unreachable (retried
    with backoff by the caller), not a reply read as logs or as no block."""
    client = _client(_Chain(blocks=100))
    client.batching.refused()
    provider = client.web3.provider
    assert isinstance(provider, _Provider)
    provider.failing = failing
    with pytest.raises(ChainUnreachable):
        await client.scan([DEPOSITS], 0, 3)
    assert provider.rate_limited == 0
