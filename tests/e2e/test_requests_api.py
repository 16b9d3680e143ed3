"""GET /requests/v3 and /requests/v2 over HTTP: keys, a bridge's record, v2's phases, limits."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.store import api_keys
from crossfill.store.migrate import upgrade
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    OPERATOR,
    ORIGIN,
    V2_STILL_SERVED,
    bridge_request,
    funded_user,
    listed_v3,
    new_api_key,
    rpc_urls,
)
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.support.database import read
from tests.support.service import ServiceThread, StartService, run_cli
from tests.support.waiting import wait_for


def _bridge(service: ServiceThread, devnet: RunningDevnet, key: str) -> dict[str, Any]:
    """A user of the key's app bridges to success: the quote as it came on the wire, the
    deposit's and the fill's hashes."""
    user = funded_user(devnet)
    with UserClient(service.base_url, rpc_urls(devnet), api_key=key) as user_client:
        quote = user_client.quote(bridge_request(user.address, referrer="wallet-a.example"))
        result = user_client.execute(quote, evm_wallet(user))
        wire = user_client.answered("/quote/v2")
    status = succeeded(result)
    (deposit,) = result.transactions
    return {"quote": wire, "deposit": deposit.tx_id, "fill": status.tx_hashes[0]}


def _assert_v3_record(record: dict[str, Any], bridged: dict[str, Any]) -> None:
    quote = bridged["quote"]
    request_id = quote["steps"][0]["requestId"]
    data = record["data"]
    assert record["id"] == request_id and record["status"] == "success"
    assert record["sender"] == record["user"] == quote["details"]["sender"]
    assert record["requestType"] == "Bridge" and record["features"] == []
    assert data["failReason"] is None and data["refundFailReason"] is None
    assert data["referrer"] == "wallet-a.example"
    (deposit,) = data["inTxs"]
    (fill,) = data["outTxs"]
    assert (deposit["txHash"], deposit["chainId"]) == (bridged["deposit"], ORIGIN)
    assert (fill["txHash"], fill["chainId"], fill["status"]) == (
        bridged["fill"],
        DESTINATION,
        "success",
    )
    assert int(fill["fee"]) > 0 and fill["block"] > 0 and fill["timestamp"] > 0
    route = data["route"]
    assert route["quoted"]["destination"]["outputCurrency"] == quote["details"]["currencyOut"]
    actual, quoted = route["actual"], route["quoted"]
    # A bridge pays exactly what was quoted, and the deposit paid exactly what was asked.
    assert (
        actual["destination"]["outputCurrency"]["amount"]
        == quote["details"]["currencyOut"]["amount"]
    )
    assert actual["destination"]["inputCurrency"] == quoted["destination"]["inputCurrency"]
    assert actual["origin"]["inputCurrency"]["amount"] == quote["details"]["currencyIn"]["amount"]
    assert data["fees"]["quoted"]["platform"]["amount"] == quote["fees"]["relayerService"]["amount"]
    assert data["fees"]["actual"] is not None
    assert record["protocol"]["orderId"] == quote["protocol"]["v2"]["orderId"]
    fills = record["protocol"]["settlement"]["destination"]["fills"]
    assert fills == [{"chainId": DESTINATION, "transactionId": bridged["fill"]}]
    assert record["createdAt"].endswith("Z") and record["updatedAt"] >= record["createdAt"]


def _assert_v2_record(
    v2_record: dict[str, Any], record: dict[str, Any], bridged: dict[str, Any]
) -> None:
    """v2 is v3 with the spec's "Differences v2 to v3" undone."""
    quote, data = bridged["quote"], record["data"]
    request_id = quote["steps"][0]["requestId"]
    v2_data = v2_record["data"]
    assert v2_record["id"] == request_id and "sender" not in v2_record
    assert v2_record["partnerId"] is None and v2_record["referrer"] == "wallet-a.example"
    assert v2_data["failReason"] == "N/A" and v2_data["refundFailReason"] == "N/A"
    assert v2_data["fees"]["price"] == quote["fees"]["relayerService"]["amount"]
    assert v2_data["feesUsd"]["gas"] == quote["fees"]["relayerGas"]["amountUsd"]
    assert v2_data["currencyObject"] == quote["details"]["currencyIn"]["currency"]
    assert v2_data["metadata"]["sender"] == record["sender"]
    assert [tx["hash"] for tx in v2_data["outTxs"]] == [bridged["fill"]]
    assert "txHash" not in v2_data["inTxs"][0]
    assert v2_data["expandedPriceImpact"]["quoted"]["relay"]
    assert v2_record["protocol"]["orderData"] == quote["protocol"]["v2"]["orderData"]
    currency_in = quote["details"]["currencyIn"]["currency"]
    assert v2_data["currency"] == v2_data["feeCurrency"] == currency_in["address"]
    assert v2_data["feeCurrencyObject"] == v2_data["appFeeCurrencyObject"] == currency_in
    assert v2_data["subsidizedRequest"] is False and "subsidizedFee" in v2_data
    assert v2_data["appFees"] == [] and v2_data["paidAppFees"] == []
    assert "supersededByRequestId" in v2_data and "supersededByRequestId" not in v2_record
    # ...and none of those v2 names survive in v3.
    for v2_only in ("currency", "currencyObject", "feeCurrency", "feesUsd", "metadata", "price"):
        assert v2_only not in data
    for v2_only in ("subsidizedRequest", "subsidizedFee", "paidAppFees", "expandedPriceImpact"):
        assert v2_only not in data
    assert "partnerId" not in record and data["externalMetadata"] == {"partnerId": None}
    assert record["supersededByRequestId"] is None and "supersededByRequestId" not in data
    assert set(data["appFees"]) == {"quoted", "actual", "currency"}
    assert "relay" not in data["fees"]["quoted"] and "platform" in data["fees"]["quoted"]


def test_a_bridge_is_listed_exactly_in_v3_and_v2(start_service: StartService, devnet) -> None:
    service = start_service(
        run_workers=True,
        settings={"admin_token": "operator-token"},
        wall_clock=lambda: V2_STILL_SERVED,
    )
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        own_key, other_key = new_api_key(http, "wallet-a"), new_api_key(http, "dapp-b")
        bridged = _bridge(service, devnet, own_key)
        quote = bridged["quote"]
        request_id = quote["steps"][0]["requestId"]

        assert http.get("/requests/v3").status_code == 401
        assert http.get("/requests/v3", headers={"x-api-key": "cfk_nope"}).status_code == 401

        listed = listed_v3(
            http, own_key, apiKey=own_key, includeAuthenticatedData="true", includeTotal="true"
        )
        assert listed["total"] == 1
        (record,) = listed["requests"]
        for search in (
            {"term": bridged["deposit"]},
            {"term": bridged["fill"]},
            {"term": quote["details"]["sender"]},
            {"depositTxHash": bridged["deposit"]},
            {"fillTxHash": bridged["fill"]},
            {"orderId": quote["protocol"]["v2"]["orderId"]},
            {"id": request_id, "status": "success", "requestType": "Bridge"},
        ):
            assert [r["id"] for r in listed_v3(http, other_key, **search)["requests"]] == [
                request_id
            ]
        assert listed_v3(http, other_key, refundTxHash=bridged["fill"])["requests"] == []
        seen_by_other = listed_v3(http, other_key, id=request_id, includeAuthenticatedData="true")

        v2 = http.get("/requests/v2", params={"hash": bridged["fill"], "includeOrderData": "true"})
    assert v2.status_code == 200, v2.text
    (v2_record,) = v2.json()["requests"]

    assert "referrer" not in seen_by_other["requests"][0]["data"]  # not that key's request
    _assert_v3_record(record, bridged)
    _assert_v2_record(v2_record, record, bridged)


@pytest.mark.parametrize(
    "params",
    [
        {"limit": "0"},
        {"limit": "51"},
        {"limit": "ten"},
        {"filters": "[{"},
        {"filters": '{"status": "success"}'},
        {"filters": '[{"amountUsdMin": "5"}]'},
        {"filters": '[{"features": "app_fees"}]'},
        {"filters": '[{"colour": "red"}]'},
        {"status": "lost"},
        {"failReason": "NOT_A_REASON"},
        {"originChainId": "-1"},
        {"amountUsdMin": "lots"},
        {"features": "teleport"},
        {"sortBy": "name"},
        {"sortDirection": "up"},
        {"continuation": "not-a-cursor"},
        {"includeTotal": "maybe"},
    ],
)
def test_bad_listing_parameters_are_json_400s(start_service: StartService, params) -> None:
    service = start_service(settings={"admin_token": "operator-token"})
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        key = new_api_key(http, "bad-input")
        response = http.get("/requests/v3", params=params, headers={"x-api-key": key})
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["statusCode"] == 400 and body["message"]


def test_v2_deprecation_follows_the_calendar(start_service: StartService) -> None:
    now = [datetime(2026, 7, 1, tzinfo=UTC)]
    service = start_service(
        settings={"rate_limit_anonymous_per_minute": 30}, wall_clock=lambda: now[0]
    )
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        before = http.get("/requests/v2")
        assert before.status_code == 200 and "Deprecation" not in before.headers

        now[0] = datetime(2026, 8, 15, tzinfo=UTC)
        deprecated = http.get("/requests/v2")
        assert deprecated.status_code == 200
        assert deprecated.headers["Deprecation"] == "true"
        assert deprecated.headers["Sunset"] == "Tue, 24 Nov 2026 00:00:00 GMT"
        assert "/requests/v3" in deprecated.headers["Link"]

        now[0] = datetime(2026, 11, 21, tzinfo=UTC)  # a tenth of 30 per minute: 3
        answers = [http.get("/requests/v2") for _ in range(4)]
        assert [a.status_code for a in answers] == [200, 200, 200, 429]
        assert int(answers[-1].headers["Retry-After"]) >= 1
        assert "/requests/v3" in answers[-1].json()["message"]

        now[0] = datetime(2026, 11, 24, tzinfo=UTC)
        gone = http.get("/requests/v2")
    assert gone.status_code == 410
    assert "/requests/v3" in gone.json()["message"]


def test_rate_limits_answer_429_and_keys_get_more(start_service: StartService) -> None:
    service = start_service(
        settings={
            "admin_token": "operator-token",
            "rate_limit_anonymous_per_minute": 5,
            "rate_limit_key_per_minute": 50,
        }
    )
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        key = new_api_key(http, "limits")
        anonymous = [http.get("/chains").status_code for _ in range(6)]
        keyed = [http.get("/chains", headers={"x-api-key": key}).status_code for _ in range(10)]
        limited = http.get("/chains")
    assert anonymous == [200] * 5 + [429]
    assert keyed == [200] * 10
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) >= 1
    assert limited.json()["statusCode"] == 429


def test_processes_sharing_redis_share_one_budget(start_service: StartService) -> None:
    # A Redis database of its own: the suite runs on several workers at once.
    store = redis.Redis.from_url("redis://127.0.0.1:6379/1")
    for stale in store.scan_iter("crossfill:ratelimit:*"):
        store.delete(stale)
    shared = {"redis_url": "redis://127.0.0.1:6379/1", "rate_limit_anonymous_per_minute": 6}
    first, second = start_service(settings=shared), start_service(settings=shared)
    codes = []
    for turn in range(7):
        target = first if turn % 2 == 0 else second
        codes.append(httpx.get(f"{target.base_url}/chains", timeout=10).status_code)
    assert codes == [200] * 6 + [429]


def test_admin_keys_need_the_operator_token_and_revocation_takes_hold(
    start_service: StartService,
) -> None:
    closed = start_service()
    assert httpx.get(f"{closed.base_url}/admin/api-keys", timeout=10).status_code == 403
    service = start_service(settings={"admin_token": "operator-token"})
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        wrong = http.get("/admin/api-keys", headers={"Authorization": "Bearer guess"})
        assert wrong.status_code == 401
        key = new_api_key(http, "short-lived")
        listed = http.get("/admin/api-keys", headers=OPERATOR).json()["apiKeys"]
        assert key not in str(listed)
        (entry,) = listed
        assert key.startswith(entry["prefix"])
        assert listed_v3(http, key)["requests"] == []
        revoked = http.delete(f"/admin/api-keys/{entry['id']}", headers=OPERATOR)
        assert revoked.json()["revokedAt"] is not None
        assert wait_for(
            lambda: http.get("/requests/v3", headers={"x-api-key": key}).status_code == 401,
            timeout=10,
        )


def test_keys_cli_shows_the_key_once_and_keeps_only_its_hash(tmp_path: Path) -> None:
    def run(*args: str) -> str:
        done = run_cli("keys", *args, home=tmp_path, log_level="WARNING")
        done.check_returncode()
        return done.stdout

    key = run("create", "--name", "cli partner").strip().splitlines()[-1]
    assert key.startswith("cfk_") and len(key) > 40
    listing = run("list")
    assert "cli partner" in listing and key[:10] in listing and key not in listing
    database = f"sqlite+aiosqlite:///{tmp_path / 'crossfill.db'}"
    upgrade(database)

    async def stored(session: AsyncSession) -> tuple[list[str], bool]:
        rows = await api_keys.all_keys(session)
        active = await api_keys.authenticate(session, key) is not None
        return [row.key_hash for row in rows], active

    hashes, active = read(database, stored)
    assert hashes == [api_keys.key_hash(key)] and key not in hashes and active
    run("revoke", key[:10])
    assert read(database, stored)[1] is False
