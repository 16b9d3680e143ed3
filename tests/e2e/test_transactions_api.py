"""POST /transactions/index and /transactions/single: accepted hints, clear 400s for bad ones."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

GOOD_HASH = "0x" + "ab" * 32


@pytest.mark.parametrize("chain_id", ["900001", 900002])
def test_index_hint_for_a_known_chain_is_accepted(client: httpx.Client, chain_id: Any) -> None:
    response = client.post(
        "/transactions/index", json={"txHash": GOOD_HASH, "chainId": chain_id, "referrer": "app"}
    )
    assert response.status_code == 200
    assert response.json() == {"message": "Success"}


@pytest.mark.parametrize(
    ("body", "error_code"),
    [
        ({"txHash": GOOD_HASH, "chainId": "1"}, "UNSUPPORTED_CHAIN"),
        ({"txHash": GOOD_HASH, "chainId": "abc"}, "UNSUPPORTED_CHAIN"),
        ({"txHash": "0x1234", "chainId": "900001"}, None),
        ({"txHash": "not-a-hash", "chainId": "900001"}, None),
        ({"chainId": "900001"}, None),
        ({"txHash": GOOD_HASH}, None),
        ({"txHash": GOOD_HASH, "chainId": 9000.01}, None),
    ],
)
def test_bad_index_hints_are_json_400s(
    client: httpx.Client, body: dict[str, Any], error_code: str | None
) -> None:
    response = client.post("/transactions/index", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["statusCode"] == 400
    assert response.json()["message"]
    assert response.json().get("errorCode") == error_code


def test_single_is_accepted_for_known_chains_only(client: httpx.Client) -> None:
    body = {"tx": "{}", "chainId": "900001", "requestId": GOOD_HASH, "referrer": "app"}
    assert client.post("/transactions/single", json=body).json() == {"message": "Success"}
    unknown = client.post("/transactions/single", json={**body, "chainId": "5"})
    assert unknown.status_code == 400
    assert unknown.json()["errorCode"] == "UNSUPPORTED_CHAIN"
    assert client.post("/transactions/single", json={"chainId": "900001"}).status_code == 400


def test_non_json_body_is_a_400(client: httpx.Client) -> None:
    response = client.post(
        "/transactions/index", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert response.json()["statusCode"] == 400
