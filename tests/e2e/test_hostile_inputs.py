"""What a hostile client sends is a 400 in the error shape: never a 500, never a stalled
worker, never a request that poisons itself after the deposit."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest
from eth_account import Account
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession
from web3 import Web3

from crossfill.store.tables import Request
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    V2_STILL_SERVED,
    balance,
    final_status,
    funded_user,
    native_bridge,
    request_quote,
    rpc_urls,
    usdc,
)
from tests.support.database import write
from tests.support.service import ServiceThread, StartService
from tests.support.wallets.evm import execute_steps

OPERATOR = {"Authorization": "Bearer operator-token"}
HASH = "0x" + "ab" * 32
BIG = str(2**63)
LONE_SURROGATE = "\ud800"
SUPERSCRIPT_TWO, FULL_WIDTH_FIVE = "\u00b2", "\uff15"


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    # GET /requests/v2's parameters are checked while it is served (it is 410 once retired).
    return start_service(
        settings={"admin_token": "operator-token"}, wall_clock=lambda: V2_STILL_SERVED
    )


@pytest.fixture
def api_key(service: ServiceThread) -> str:
    with httpx.Client(base_url=service.base_url, headers=OPERATOR) as http:
        created = http.post("/admin/api-keys", json={"name": "hostile"})
    assert created.status_code == 201, created.text
    key: str = created.json()["key"]
    return key


def _assert_bad_request(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 400, (response.status_code, response.text)
    body: dict[str, Any] = response.json()
    assert body["statusCode"] == 400 and isinstance(body["message"], str), body
    return body


def _raw_json(value: dict[str, Any]) -> bytes:
    """JSON as a client may send it: lone surrogates escaped, which httpx would refuse."""
    return json.dumps(value).encode()


@pytest.mark.parametrize(
    "field", ["user", "recipient", "refundTo", "originCurrency", "destinationCurrency"]
)
def test_an_address_with_a_trailing_newline_is_refused_at_quote_time(
    client: httpx.Client, field: str
) -> None:
    body = native_bridge(Account.create().address)
    body[field] = (body.get(field) or Account.create().address) + "\n"
    error = _assert_bad_request(client.post("/quote/v2", json=body))
    assert error["errorCode"] in {
        "INVALID_ADDRESS",
        "INVALID_RECIPIENT",
        "INVALID_INPUT_CURRENCY",
        "INVALID_OUTPUT_CURRENCY",
    }


def test_app_fee_recipients_and_referrers_are_checked(client: httpx.Client) -> None:
    user = Account.create().address
    fee = {"recipient": Account.create().address + "\n", "fee": "10"}
    _assert_bad_request(client.post("/quote/v2", json=native_bridge(user, appFees=[fee])))
    for referrer in (LONE_SURROGATE, "x" * 10_000, "line\nforged"):
        body = _raw_json(native_bridge(user, referrer=referrer))
        response = client.post(
            "/quote/v2", content=body, headers={"content-type": "application/json"}
        )
        _assert_bad_request(response)


@pytest.mark.parametrize("path", ["/quote/v2", "/price"])
@pytest.mark.parametrize(
    "field", ["includedSwapSources", "excludedSwapSources", "includedDestinationSwapSources"]
)
def test_a_lone_surrogate_an_error_message_names_is_still_a_400(
    client: httpx.Client, devnet: RunningDevnet, path: str, field: str
) -> None:
    # The message names the unknown swap source; writing it as UTF-8 once failed (a 500).
    swap = native_bridge(
        Account.create().address,
        destinationCurrency=usdc(devnet, DESTINATION),
        **{field: ["x" + LONE_SURROGATE]},
    )
    body = _raw_json(swap)
    response = client.post(path, content=body, headers={"content-type": "application/json"})
    error = _assert_bad_request(response)
    assert isinstance(error["errorCode"], str)


@pytest.mark.parametrize("path", ["/requests/v3", "/requests/v2"])
@pytest.mark.parametrize(
    "params",
    [
        {"limit": SUPERSCRIPT_TWO},
        {"limit": FULL_WIDTH_FIVE},
        {"startTimestamp": "999999999999999999"},
        {"endTimestamp": "999999999999999999"},
        {"originChainId": BIG},
        {"originChainId": "9" * 5_000},
    ],
)
def test_listing_parameters_out_of_range_are_400(
    client: httpx.Client, api_key: str, path: str, params: dict[str, str]
) -> None:
    _assert_bad_request(client.get(path, params=params, headers={"x-api-key": api_key}))


@pytest.mark.parametrize(
    "filters",
    [
        json.dumps([{"originChainId": 2**63}]),
        json.dumps([{"not:destinationChainId": [2**63]}]),
        '[{"id": "\\ud800"}]',
        "[" * 2_000 + "]" * 2_000,
        '[{"user": ' + "[" * 2_000 + "]" * 2_000 + "}]",
    ],
)
def test_hostile_filters_are_400(client: httpx.Client, api_key: str, filters: str) -> None:
    response = client.get(
        "/requests/v3", params={"filters": filters}, headers={"x-api-key": api_key}
    )
    _assert_bad_request(response)


def test_a_forged_amount_cursor_is_400(client: httpx.Client, api_key: str) -> None:
    forged = base64.urlsafe_b64encode(
        json.dumps(["amountUsd", "asc", 2**63, HASH]).encode()
    ).decode()
    response = client.get(
        "/requests/v3",
        params={"sortBy": "amountUsd", "continuation": forged},
        headers={"x-api-key": api_key},
    )
    _assert_bad_request(response)


@pytest.mark.parametrize("path", ["/transactions/index", "/transactions/single"])
@pytest.mark.parametrize("chain_id", [SUPERSCRIPT_TWO, "9" * 5_000, "\uff19\uff10\uff10", BIG])
def test_hint_chain_ids_must_be_ascii_chain_ids(
    client: httpx.Client, path: str, chain_id: str
) -> None:
    body = {"txHash": HASH, "tx": HASH, "chainId": chain_id}
    error = _assert_bad_request(client.post(path, json=body))
    assert error["errorCode"] == "UNSUPPORTED_CHAIN"


def test_a_hint_hash_with_a_trailing_newline_is_refused(client: httpx.Client) -> None:
    response = client.post(
        "/transactions/index", json={"txHash": HASH + "\n", "chainId": str(ORIGIN)}
    )
    _assert_bad_request(response)


def test_include_chains_takes_ascii_chain_ids_only(client: httpx.Client) -> None:
    for bad in (SUPERSCRIPT_TWO, BIG, f"{ORIGIN},{FULL_WIDTH_FIVE}"):
        _assert_bad_request(client.get("/chains", params={"includeChains": bad}))
    listed = client.get("/chains", params={"includeChains": str(ORIGIN)})
    assert [chain["id"] for chain in listed.json()["chains"]] == [ORIGIN]


def test_status_takes_a_request_id_only(client: httpx.Client) -> None:
    for bad in (HASH + "%0A", "0x1", "%ED%A0%80", "%F0%9F%98%80"):
        _assert_bad_request(client.get(f"/intents/status/v3?requestId={bad}"))
    assert client.get("/intents/status/v3", params={"requestId": HASH}).status_code == 404


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", f"/admin/api-keys/{BIG}"),
        ("DELETE", f"/admin/api-keys/{SUPERSCRIPT_TWO}"),
        ("DELETE", "/admin/api-keys/1%0A"),
        ("GET", f"/admin/webhooks/{BIG}"),
        ("DELETE", f"/admin/webhooks/{BIG}"),
        ("POST", f"/admin/webhooks/{BIG}/replay"),
        ("DELETE", f"/admin/api-keys/{BIG}/sponsor"),
    ],
)
def test_admin_ids_beyond_bigint_are_400(client: httpx.Client, method: str, path: str) -> None:
    _assert_bad_request(client.request(method, path, headers=OPERATOR))


def test_admin_key_names_must_be_printable(client: httpx.Client) -> None:
    response = client.post(
        "/admin/api-keys",
        content=_raw_json({"name": LONE_SURROGATE}),
        headers={**OPERATOR, "content-type": "application/json"},
    )
    _assert_bad_request(response)


def test_a_request_the_solver_cannot_process_is_refunded_and_others_still_fill(
    start_service: StartService, devnet
) -> None:
    """A record the solver cannot read (here a fill plan of a version it does not know, as a
    newer release might write) fails with a reason and is refunded; the good request beside
    it fills."""
    service = start_service(run_workers=True)
    poisoned_user, good_user = funded_user(devnet), funded_user(devnet)
    good_recipient = Account.create().address
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        poisoned = request_quote(http, native_bridge(poisoned_user.address))
        good = request_quote(http, native_bridge(good_user.address, recipient=good_recipient))
        poisoned_id = poisoned["steps"][0]["requestId"]
        _store_unreadable_fill_plan(service, poisoned_id)
        execute_steps(poisoned, poisoned_user, rpc_urls(devnet))
        execute_steps(good, good_user, rpc_urls(devnet))
        good_status = final_status(http, good["steps"][0]["requestId"])
        poisoned_status = final_status(http, poisoned_id, until=frozenset({"refund"}))
    assert good_status["status"] == "success"
    assert balance(devnet, DESTINATION, NATIVE, good_recipient) > 0
    assert poisoned_status["failReason"] == "UNKNOWN"
    (refund_hash,) = poisoned_status["txHashes"]
    origin = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    assert origin.eth.get_transaction_receipt(refund_hash)["status"] == 1


def _store_unreadable_fill_plan(service: ServiceThread, request_id: str) -> None:
    async def unreadable(session: AsyncSession) -> None:
        await session.execute(
            update(Request).where(Request.id == request_id).values(fill_plan={"version": 99})
        )

    write(service.settings.database, unreadable)
