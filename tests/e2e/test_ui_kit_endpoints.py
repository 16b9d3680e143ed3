"""What the UI kit's hooks call, served from the chain registry and the price book quotes use:
POST /price, POST /currencies/v2, GET /currencies/token/price, GET /config/v2. Answers match
the shapes taken from the hooks package (wire_schemas), bad input is a 400 in the error shape."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import httpx
import pytest
from eth_account import Account
from sqlalchemy import select

from crossfill.store.tables import Request
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    balance,
    funded_user,
    native_bridge,
    request_quote,
    stored_rows,
    usdc,
)
from tests.e2e.conftest import validate_against
from tests.support.service import ServiceThread
from tests.support.waiting import wait_for

LONE_SURROGATE = "\ud800"


def _bad_request(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 400, (response.status_code, response.text)
    body: dict[str, Any] = response.json()
    assert body["statusCode"] == 400 and isinstance(body["message"], str), body
    return body


# ---- POST /price -----------------------------------------------------------------------------


def test_price_previews_the_quote_without_steps_or_a_stored_request(
    client: httpx.Client, service: ServiceThread
) -> None:
    body = native_bridge(Account.create().address, appFees=[{"recipient": NATIVE, "fee": "50"}])
    stored_before = len(stored_rows(service, select(Request.id)))
    response = client.post("/price", json=body)
    assert response.status_code == 200, response.text
    price = response.json()
    validate_against("price", price)
    assert set(price) == {"fees", "details"}
    assert len(stored_rows(service, select(Request.id))) == stored_before
    quote = request_quote(client, body)
    assert price["details"]["currencyIn"] == quote["details"]["currencyIn"]
    assert price["fees"]["app"] == quote["fees"]["app"]
    assert price["details"]["operation"] == quote["details"]["operation"] == "bridge"


def test_price_refuses_what_a_quote_refuses_with_the_same_code(client: httpx.Client) -> None:
    body = native_bridge(Account.create().address, destinationChainId=1)
    price, quote = client.post("/price", json=body), client.post("/quote/v2", json=body)
    assert _bad_request(price) == _bad_request(quote)
    assert price.json()["errorCode"] == "UNSUPPORTED_CHAIN"
    assert _bad_request(client.post("/price", json={"user": 5}))["errorCode"] == "INVALID_INPUT"


# ---- POST /currencies/v2 -----------------------------------------------------------------------


def _listed(client: httpx.Client, body: dict[str, Any] | None) -> list[tuple[int, str]]:
    response = client.post("/currencies/v2", json=body)
    assert response.status_code == 200, response.text
    validate_against("currencies-v2", response.json())
    return [(entry["chainId"], entry["symbol"]) for entry in response.json()]


def test_currencies_list_and_search_the_registry(
    client: httpx.Client, devnet: RunningDevnet
) -> None:
    everything = [
        (chain, symbol) for chain in (ORIGIN, DESTINATION) for symbol in ("ETH", "USDC", "WETH")
    ]
    assert _listed(client, None) == everything
    assert _listed(client, {"chainIds": [DESTINATION]}) == everything[3:]
    assert _listed(client, {"term": "usd"}) == [(ORIGIN, "USDC"), (DESTINATION, "USDC")]
    assert _listed(client, {"term": "ether", "chainIds": [ORIGIN]}) == [
        (ORIGIN, "ETH"),
        (ORIGIN, "WETH"),
    ]
    assert _listed(client, {"currencyId": "WETH"}) == [(ORIGIN, "WETH"), (DESTINATION, "WETH")]
    origin_usdc = usdc(devnet, ORIGIN)
    on_origin = {"chainIds": [ORIGIN]}
    assert _listed(client, {"address": origin_usdc, **on_origin}) == [(ORIGIN, "USDC")]
    assert _listed(client, {"term": origin_usdc.lower(), **on_origin}) == [(ORIGIN, "USDC")]
    assert _listed(client, {"address": origin_usdc, "includeAllChains": True, **on_origin}) == [
        (ORIGIN, "USDC"),
        (DESTINATION, "USDC"),
    ]
    assert _listed(client, {"tokens": [f"{DESTINATION}:{usdc(devnet, DESTINATION)}"]}) == [
        (DESTINATION, "USDC")
    ]
    assert _listed(client, {"limit": 2, "referrer": "ui"}) == everything[:2]
    assert _listed(client, {"verified": False}) == []
    # Every devnet EVM chain has a deposit-address factory.
    assert _listed(client, {"depositAddressOnly": True}) == everything


@pytest.mark.parametrize(
    "body",
    [
        {"chainIds": [-1]},
        {"chainIds": [1]},
        {"chainIds": [2**63]},
        {"chainIds": ["x"]},
        {"chainIds": list(range(1, 200))},
        {"term": "usd\n"},
        {"term": "u" * 101},
        {"term": LONE_SURROGATE},
        {"address": "0x12"},
        {"tokens": ["usdc"]},
        {"tokens": [f"1:{NATIVE}"]},
        {"limit": 0},
        {"limit": 10_000},
        {"verified": "yes"},
        {"currencyId": ["usdc"]},
        [],
    ],
)
def test_currencies_refuse_bad_filters(client: httpx.Client, body: Any) -> None:
    # Sent as raw JSON: lone surrogates escaped, as a client may send them (httpx refuses).
    content = json.dumps(body).encode()
    headers = {"content-type": "application/json"}
    _bad_request(client.post("/currencies/v2", content=content, headers=headers))


# ---- GET /currencies/token/price ---------------------------------------------------------------


def test_token_price_is_the_price_quotes_use(client: httpx.Client, devnet: RunningDevnet) -> None:
    one_ether = native_bridge(Account.create().address, amount=str(10**18))
    quoted_usd = Decimal(request_quote(client, one_ether)["details"]["currencyIn"]["amountUsd"])
    response = client.get("/currencies/token/price", params={"chainId": ORIGIN, "address": NATIVE})
    assert response.status_code == 200
    validate_against("token-price", response.json())
    assert Decimal(str(response.json()["price"])) == quoted_usd
    stable = client.get(
        "/currencies/token/price",
        params={"chainId": str(DESTINATION), "address": usdc(devnet, DESTINATION)},
    )
    assert stable.json() == {"price": 1}


@pytest.mark.parametrize(
    "params",
    [
        {"chainId": ORIGIN},
        {"address": NATIVE},
        {"chainId": "1", "address": NATIVE},
        {"chainId": "-5", "address": NATIVE},
        {"chainId": "9" * 40, "address": NATIVE},
        {"chainId": ORIGIN, "address": "0x" + "12" * 20},
        {"chainId": ORIGIN, "address": "eth"},
        {"chainId": ORIGIN, "address": NATIVE + "\n"},
        {"chainId": ORIGIN, "address": "0x" + "0" * 5000},
    ],
)
def test_token_price_refuses_bad_queries(client: httpx.Client, params: dict[str, Any]) -> None:
    _bad_request(client.get("/currencies/token/price", params=params))


# ---- GET /config/v2 ------------------------------------------------------------------------------


def _config(client: httpx.Client, **params: Any) -> dict[str, Any]:
    query = {"originChainId": ORIGIN, "destinationChainId": DESTINATION, **params}
    response = client.get("/config/v2", params=query)
    assert response.status_code == 200, response.text
    validate_against("config-v2", response.json())
    answer: dict[str, Any] = response.json()
    return answer


def test_config_reports_solver_capacity_and_the_users_limit(
    client: httpx.Client, devnet: RunningDevnet
) -> None:
    solver = devnet.deployment.solver.address
    user = funded_user(devnet)
    native = _config(client, user=user.address)
    assert native["enabled"] is True and native["supportsExternalLiquidity"] is False
    assert native["solver"]["address"] == solver
    assert wait_for(
        lambda: (
            int(_config(client)["solver"]["balance"])
            == balance(devnet, DESTINATION, NATIVE, solver)
        ),
        timeout=5,
    )
    assert native["solver"]["capacityPerRequest"] == native["solver"]["balance"]
    held = balance(devnet, ORIGIN, NATIVE, user.address)
    assert native["user"]["balance"] == str(held)
    assert 0 < int(native["user"]["maxBridgeAmount"]) < held  # the deposit's gas is kept back
    stable = _config(client, currency="usdc", referrer="ui")
    assert int(stable["solver"]["balance"]) == balance(
        devnet, DESTINATION, usdc(devnet, DESTINATION), solver
    )
    assert "user" not in stable


@pytest.mark.parametrize(
    "params",
    [
        {"originChainId": ORIGIN},
        {"destinationChainId": DESTINATION},
        {"originChainId": "1", "destinationChainId": DESTINATION},
        {"originChainId": ORIGIN, "destinationChainId": "x"},
        {"originChainId": ORIGIN, "destinationChainId": "9" * 30},
        {"originChainId": ORIGIN, "destinationChainId": DESTINATION, "currency": "doge"},
        {"originChainId": ORIGIN, "destinationChainId": DESTINATION, "currency": "usdc\n"},
        {"originChainId": ORIGIN, "destinationChainId": DESTINATION, "user": "0x12"},
        {"originChainId": ORIGIN, "destinationChainId": DESTINATION, "user": "u" * 1000},
    ],
)
def test_config_refuses_bad_queries(client: httpx.Client, params: dict[str, Any]) -> None:
    _bad_request(client.get("/config/v2", params=params))
