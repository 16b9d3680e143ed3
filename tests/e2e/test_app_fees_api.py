"""The app-fee and fast-fill endpoints refuse what a hostile or confused client sends with a
clear 4xx in the error shape, and never touch a balance doing so."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from eth_account import Account

from tests.e2e.bridging import NATIVE, ORIGIN
from tests.e2e.conftest import validate_against
from tests.support.service import ServiceThread, StartService

OPERATOR = {"Authorization": "Bearer operator-token"}
WALLET = "0x" + "11" * 20
HASH = "0x" + "ab" * 32


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(settings={"admin_token": "operator-token"})


def _refused(response: httpx.Response, status: int = 400) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text)
    body: dict[str, Any] = response.json()
    assert body["statusCode"] == status and isinstance(body["message"], str), body
    return body


def test_a_wallet_that_earned_nothing_has_empty_balances(client: httpx.Client) -> None:
    response = client.get(f"/app-fees/{Account.create().address}/balances")
    assert response.status_code == 200
    validate_against("app-fee-balances", response.json())
    assert response.json() == {
        "balances": [],
        "totalBalanceUsd": 0,
        "outstandingFastFillBalanceUsd": 0,
        "availableBalanceUsd": 0,
    }


@pytest.mark.parametrize("wallet", ["0x12", "0x" + "g" * 40, WALLET + "00", "x" * 300, "%0A"])
def test_a_malformed_wallet_is_refused_everywhere(client: httpx.Client, wallet: str) -> None:
    _refused(client.get(f"/app-fees/{wallet}/balances"))
    _refused(client.post(f"/app-fees/{wallet}/claim", json={"chainId": ORIGIN, "currency": NATIVE}))
    _refused(client.get(f"/app-fees/{wallet}/claims/{HASH}"))


@pytest.mark.parametrize(
    ("body", "phrase"),
    [
        ({"chainId": 1, "currency": NATIVE}, "chain 1 is not supported"),
        ({"chainId": -1, "currency": NATIVE}, "chainId"),
        ({"chainId": 2**70, "currency": NATIVE}, "chainId"),
        ({"chainId": "abc", "currency": NATIVE}, "chainId"),
        ({"chainId": ORIGIN, "currency": "eth"}, "currency"),
        ({"chainId": ORIGIN, "currency": "0x" + "12" * 20}, "is not a currency of chain"),
        ({"chainId": ORIGIN, "currency": NATIVE, "recipient": "0x12"}, "recipient"),
        ({"chainId": ORIGIN, "currency": NATIVE, "amount": "-1"}, "amount"),
        ({"chainId": ORIGIN, "currency": NATIVE, "amount": "9" * 90}, "amount"),
        ({"chainId": ORIGIN, "currency": NATIVE}, "nothing to claim"),
        ({"currency": NATIVE}, "chainId"),
    ],
)
def test_a_bad_claim_request_is_refused(
    client: httpx.Client, body: dict[str, Any], phrase: str
) -> None:
    assert phrase in _refused(client.post(f"/app-fees/{WALLET}/claim", json=body))["message"]


def _terms(**changes: Any) -> dict[str, Any]:
    terms = {
        "wallet": WALLET,
        "recipient": WALLET,
        "chainId": ORIGIN,
        "currency": NATIVE,
        "amount": "1000",
        "throughFeeId": 1,
        "expiry": int(time.time()) + 600,
    }
    return {**terms, **changes}


@pytest.mark.parametrize(
    ("terms", "signature", "status"),
    [
        (_terms(), None, 400),
        (_terms(), "0x12", 400),
        (_terms(), "0x" + "zz" * 65, 400),
        (_terms(), "0x" + "00" * 65, 401),
        (_terms(), "0x" + "ab" * 65, 401),
        (_terms(wallet="0x" + "22" * 20), "0x" + "00" * 65, 400),
        (_terms(expiry=1), "0x" + "00" * 65, 400),
        (_terms(expiry=10**30), "0x" + "00" * 65, 400),
        (_terms(throughFeeId=0), "0x" + "00" * 65, 400),
        (_terms(amount="1.5"), "0x" + "00" * 65, 400),
        (_terms(chainId=1), "0x" + "00" * 65, 400),
        (_terms(currency="0x" + "12" * 20), "0x" + "00" * 65, 400),
        ({"wallet": WALLET}, "0x" + "00" * 65, 400),
    ],
)
def test_a_bad_claim_filing_is_refused(
    client: httpx.Client, terms: dict[str, Any], signature: str | None, status: int
) -> None:
    params = {} if signature is None else {"signature": signature}
    _refused(client.post(f"/app-fees/{WALLET}/claims", params=params, json=terms), status)


def test_a_claim_nobody_filed_is_not_found(client: httpx.Client) -> None:
    _refused(client.get(f"/app-fees/{WALLET}/claims/{HASH}"), 404)
    _refused(client.get(f"/app-fees/{WALLET}/claims/0x12"))


@pytest.fixture
def api_key(service: ServiceThread) -> str:
    with httpx.Client(base_url=service.base_url, headers=OPERATOR) as http:
        created = http.post("/admin/api-keys", json={"name": "fast-fill"})
    assert created.status_code == 201, created.text
    key: str = created.json()["key"]
    return key


def test_fast_fill_is_refused_as_not_offered(client: httpx.Client, api_key: str) -> None:
    _refused(client.post("/fast-fill", json={"requestId": HASH}), 401)
    keyed = {"x-api-key": api_key}
    body = _refused(client.post("/fast-fill", json={"requestId": HASH}, headers=keyed), 403)
    assert body["errorCode"] == "FAST_FILL_DISABLED"
    assert "not offered" in body["message"]
    for bad in (
        {"requestId": "0x12"},
        {"requestId": HASH, "solverInputCurrencyAmount": "-3"},
        {"requestId": HASH, "maxFillAmountUsd": -1},
        {},
    ):
        _refused(client.post("/fast-fill", json=bad, headers=keyed))
    not_json = client.post(
        "/fast-fill",
        content=json.dumps({"requestId": HASH})[:-1].encode(),
        headers={**keyed, "content-type": "application/json"},
    )
    _refused(not_json)
