"""The exchange client turns each exchange answer into its typed outcome (scripted HTTP
transport): a refusal with the exchange's message, and the chain ports' transient faults."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal

import httpx
import pytest
from eth_account import Account

from crossfill.errors import ActionRefused, ChainError, ChainUnreachable, RateLimited
from crossfill.kinds.perps.actions import UsdSend, sign_action
from crossfill.kinds.perps.client import ActionAccepted, OtherDelta, PerpsClient, Transfer
from crossfill.types import ChainId

WALLET = Account.create()
SIGNED = sign_action(UsdSend("Mainnet", 0xA4B1, "0x" + "ab" * 20, "1.5", time=1), WALLET)


def _client(answer: Callable[[httpx.Request], httpx.Response]) -> PerpsClient:
    transport = httpx.MockTransport(answer)
    return PerpsClient(ChainId(1337), "http://exchange.test/", transport=transport)


async def test_an_accepted_action_posts_the_sdk_shaped_body() -> None:
    seen: list[dict[str, object]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/exchange"
        seen.append(json.loads(request.content))
        return httpx.Response(200, json={"status": "ok", "response": {"type": "default"}})

    assert await _client(answer).post_action(SIGNED) == ActionAccepted(nonce=1)
    assert seen == [SIGNED.request_body()]
    assert set(seen[0]) == {"action", "nonce", "signature", "vaultAddress", "expiresAfter"}


async def test_a_refusal_carries_the_exchange_message() -> None:
    refusal = {"status": "err", "response": "Insufficient balance"}
    client = _client(lambda _r: httpx.Response(200, json=refusal))
    with pytest.raises(ActionRefused) as refused:
        await client.post_action(SIGNED)
    assert refused.value.message == "Insufficient balance"


def _raise(error: type[httpx.TransportError]) -> Callable[[httpx.Request], httpx.Response]:
    def answer(request: httpx.Request) -> httpx.Response:
        raise error("no", request=request)

    return answer


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        (lambda _r: httpx.Response(429, headers={"Retry-After": "2"}), RateLimited),
        (lambda _r: httpx.Response(502), ChainUnreachable),
        (lambda _r: httpx.Response(503, text="maintenance"), ChainUnreachable),
        (_raise(httpx.ConnectError), ChainUnreachable),
        (_raise(httpx.ReadTimeout), ChainUnreachable),
        (lambda _r: httpx.Response(200, text="<html>"), ChainError),
        (lambda _r: httpx.Response(200, json={"status": "maybe"}), ChainError),
        (lambda _r: httpx.Response(422, text="Failed to deserialize"), ChainError),
    ],
)
async def test_transient_and_unreadable_answers_are_typed(
    answer: Callable[[httpx.Request], httpx.Response], outcome: type[Exception]
) -> None:
    with pytest.raises(outcome) as raised:
        await _client(answer).post_action(SIGNED)
    assert not isinstance(raised.value, ActionRefused)
    if outcome is RateLimited:
        assert isinstance(raised.value, RateLimited) and raised.value.retry_after_seconds == 2


async def test_ledger_updates_are_read_into_transfers() -> None:
    updates = [
        {"time": 5, "hash": "0x" + "1" * 64, "delta": {"type": "internalTransfer", "usdc": "2.5",
         "user": "0xa", "destination": "0xb", "fee": "0.0", "nonce": 7}},
        {"time": 6, "hash": "0x" + "2" * 64, "delta": {"type": "send", "user": "0xa",
         "destination": "0xb", "sourceDex": "", "destinationDex": "spot", "token": "USDC",
         "amount": "1", "usdcValue": "1", "fee": "0.0", "nativeTokenFee": "0.0", "nonce": 8}},
        {"time": 7, "hash": "0x" + "3" * 64, "delta": {"type": "deposit", "usdc": "9"}},
    ]  # fmt: skip

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        assert body == {"type": "userNonFundingLedgerUpdates", "user": "0xb", "startTime": 4}
        return httpx.Response(200, json=updates)

    first, second, third = await _client(answer).ledger_updates("0xb", start_ms=4)
    assert first.delta == Transfer("internalTransfer", "0xa", "0xb", "USDC", Decimal("2.5"), 7)
    assert isinstance(second.delta, Transfer) and second.delta.destination_dex == "spot"
    assert second.hash == "0x" + "2" * 64 and second.time == 6
    assert third.delta == OtherDelta("deposit")


async def test_balances_are_decimals() -> None:
    state = {"withdrawable": "12.345678", "marginSummary": {"accountValue": "13.0"}}
    client = _client(lambda _r: httpx.Response(200, json=state))
    clearinghouse = await client.clearinghouse_state("0xb")
    assert clearinghouse.withdrawable == Decimal("12.345678")
    assert clearinghouse.account_value == Decimal(13)


async def test_an_unexpected_info_shape_is_a_chain_error() -> None:
    with pytest.raises(ChainError):
        await _client(lambda _r: httpx.Response(200, json={"x": 1})).clearinghouse_state("0xb")
