"""Prices on real chains: derived from the devnet pool, or read from a Chainlink-style feed."""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import httpx
from eth_account import Account

from crossfill.config import Deployment
from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at, deploy, send, signing_web3
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    ORIGIN,
    balance,
    deposit_usdc,
    final_status,
    funded_user,
    native_bridge,
    pool_price_moved,
    request_quote,
    rpc_urls,
    usdc,
)
from tests.support.service import StartService
from tests.support.waiting import wait_for

FEED_DECIMALS = 8


def _with_eth_feed(deployment: Deployment, feed: str, max_age: int) -> Deployment:
    document = deployment.model_dump(mode="json")
    native = document["chains"][0]["native_currency"]
    native.update(price_source="feed", price_feed=feed, price_feed_max_age_seconds=max_age)
    return type(deployment).model_validate(document)


def _body() -> dict[str, Any]:
    return native_bridge(Account.create().address, amount=str(10**18))


def test_feed_price_prices_the_quote_and_a_stale_round_is_a_503(
    devnet: RunningDevnet, start_service: StartService
) -> None:
    owner = accounts.deployer()
    web3 = signing_web3(rpc_urls(devnet)[ORIGIN], owner)
    feed = contract_at(web3, "TestPriceFeed", deploy(web3, "TestPriceFeed", owner.address, 8))
    now = int(time.time())
    send(web3, feed.functions.post(2_500 * 10**FEED_DECIMALS, now))
    service = start_service(_with_eth_feed(devnet.deployment, feed.address, max_age=600))
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, _body())
        assert quote["details"]["currencyIn"]["amountUsd"] == "2500"

        send(web3, feed.functions.post(2_500 * 10**FEED_DECIMALS, now - 3_600))
        responses: list[httpx.Response] = []

        def refused() -> bool:  # once the follower has read the stale round
            responses.append(http.post("/quote/v2", json=_body()))
            return responses[-1].status_code == 503

        assert wait_for(refused, timeout=10), responses[-1].text
        assert responses[-1].json()["errorCode"] == "PRICE_FETCH_FAILED"
        assert "stale" in responses[-1].json()["message"]


def test_devnet_prices_follow_the_pool(devnet: RunningDevnet, start_service: StartService) -> None:
    """Prices come from the WETH/USDC pool: a trade that moves the pool moves amountUsd."""
    service = start_service()
    with httpx.Client(base_url=service.base_url, timeout=10) as http:

        def quoted_usd() -> Decimal:
            return Decimal(request_quote(http, _body())["details"]["currencyIn"]["amountUsd"])

        before = quoted_usd()
        with pool_price_moved(devnet, ORIGIN, 100 * 10**18):
            assert wait_for(lambda: quoted_usd() < before * Decimal("0.9"), timeout=10)
        # Undone, less the pool fees the round trip left in the pool (~0.6% of the trade).
        assert wait_for(lambda: abs(quoted_usd() - before) < before / 100, timeout=10)


def test_a_refund_priced_by_a_feed_alone_is_paid(
    devnet: RunningDevnet, start_service: StartService
) -> None:
    """The native coin priced by a feed with no configured fallback: a USDC deposit for a
    native quote is refunded in USDC, its gas priced from the feed as quotes price it."""
    owner = accounts.deployer()
    web3 = signing_web3(rpc_urls(devnet)[ORIGIN], owner)
    feed = contract_at(web3, "TestPriceFeed", deploy(web3, "TestPriceFeed", owner.address, 8))
    send(web3, feed.functions.post(2_500 * 10**FEED_DECIMALS, int(time.time())))
    document = _with_eth_feed(devnet.deployment, feed.address, max_age=3_600).model_dump(
        mode="json"
    )
    document["chains"][0]["native_currency"]["usd_price"] = None
    service = start_service(type(devnet.deployment).model_validate(document), run_workers=True)
    user = funded_user(devnet, usdc_amount=30_000_000)
    token = usdc(devnet, ORIGIN)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, native_bridge(user.address))
        deposit_usdc(devnet, user, quote, 30_000_000)
        status = final_status(http, quote["steps"][0]["requestId"], until=frozenset({"refund"}))
    assert status["failReason"] == "INCORRECT_DEPOSIT_CURRENCY"
    assert 0 < 30_000_000 - balance(devnet, ORIGIN, token, user.address) < 1_000_000
