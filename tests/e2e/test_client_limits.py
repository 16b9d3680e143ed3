"""Per-address limits over HTTP hold against hostile clients: a forged `X-Forwarded-For` picks
no bucket, and guessing API keys runs out."""

from __future__ import annotations

from ipaddress import ip_network

import httpx
import redis

from tests.support.service import ServiceThread, StartService

OPERATOR_TOKEN = "operator-token"
LOOPBACK_PROXY = (ip_network("127.0.0.1/32"),)
WRONG_KEY = "cfk_" + "x" * 43


def _from(forwarded_for: str) -> dict[str, str]:
    return {"x-forwarded-for": forwarded_for}


def _new_key(service: ServiceThread) -> str:
    created = httpx.post(
        f"{service.base_url}/admin/api-keys",
        json={"name": "limits"},
        headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"},
        timeout=10,
    )
    assert created.status_code == 201, created.text
    key: str = created.json()["key"]
    return key


def test_a_forged_forwarded_for_from_an_untrusted_peer_picks_no_bucket(
    start_service: StartService,
) -> None:
    service = start_service(settings={"rate_limit_anonymous_per_minute": 5})
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        codes = [
            http.get("/chains", headers=_from(f"198.51.{n // 250}.{n % 250}")).status_code
            for n in range(800)
        ]
    assert codes == [200] * 5 + [429] * 795


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_bucket(
    start_service: StartService,
) -> None:
    service = start_service(
        settings={"rate_limit_anonymous_per_minute": 3, "trusted_proxies": LOOPBACK_PROXY}
    )
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        first = [http.get("/chains", headers=_from("203.0.113.1")).status_code for _ in range(4)]
        second = http.get("/chains", headers=_from("203.0.113.2"))
        # What the client wrote left of the proxy's own entry does not move it to a new bucket.
        prepended = http.get("/chains", headers=_from("198.51.100.9, 203.0.113.1"))
        proxy_itself = http.get("/chains")
    assert first == [200, 200, 200, 429]
    assert second.status_code == 200
    assert prepended.status_code == 429
    assert proxy_itself.status_code == 200


def test_wrong_keys_run_out_then_every_key_from_that_address_is_refused(
    start_service: StartService,
) -> None:
    service = start_service(
        settings={
            "admin_token": OPERATOR_TOKEN,
            "rate_limit_bad_key_per_minute": 5,
            "trusted_proxies": LOOPBACK_PROXY,
        }
    )
    key = _new_key(service)
    guesser, other = _from("203.0.113.7"), _from("203.0.113.8")
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        wrong = [
            http.get("/chains", headers={"x-api-key": WRONG_KEY, **guesser}).status_code
            for _ in range(6)
        ]
        right_from_guesser = http.get("/requests/v3", headers={"x-api-key": key, **guesser})
        anonymous_from_guesser = http.get("/chains", headers=guesser)
        right_from_other = http.get("/requests/v3", headers={"x-api-key": key, **other})
    assert wrong == [401] * 5 + [429]
    assert right_from_guesser.status_code == 429
    assert right_from_guesser.json()["statusCode"] == 429
    assert "invalid API keys" in right_from_guesser.json()["message"]
    assert int(right_from_guesser.headers["Retry-After"]) >= 1
    assert anonymous_from_guesser.status_code == 200
    assert right_from_other.status_code == 200


def test_processes_sharing_redis_share_the_wrong_key_budget(start_service: StartService) -> None:
    # A Redis database of its own: the suite runs on several workers at once.
    store = redis.Redis.from_url("redis://127.0.0.1:6379/2")
    for stale in store.scan_iter("crossfill:ratelimit:bad-key:*"):
        store.delete(stale)
    shared = {"redis_url": "redis://127.0.0.1:6379/2", "rate_limit_bad_key_per_minute": 4}
    first, second = start_service(settings=shared), start_service(settings=shared)
    codes = [
        httpx.get(
            f"{target.base_url}/chains", headers={"x-api-key": WRONG_KEY}, timeout=10
        ).status_code
        for target in (first, second, first, second, first, second)
    ]
    assert codes == [401] * 4 + [429] * 2


def test_wrong_operator_tokens_run_out_like_wrong_keys(start_service: StartService) -> None:
    service = start_service(
        settings={"admin_token": OPERATOR_TOKEN, "rate_limit_bad_key_per_minute": 3}
    )
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        unsent = http.get("/admin/api-keys").status_code
        wrong = [
            http.get("/admin/api-keys", headers={"Authorization": f"Bearer guess-{n}"}).status_code
            for n in range(4)
        ]
        right = http.get("/admin/api-keys", headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"})
    assert unsent == 401  # no token sent is not a guess
    assert wrong == [401] * 3 + [429]
    assert right.status_code == 429 and int(right.headers["Retry-After"]) >= 1
