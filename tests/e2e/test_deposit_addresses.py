"""Deposit addresses on the devnet: a plain transfer to the request's own address is swept into
the Depository and filled, or refunded; every balance is read on chain."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3

from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    OPERATOR_TOKEN,
    ORIGIN,
    balance,
    final_status,
    funded_user,
    new_api_key,
    request_quote,
    rpc_urls,
)
from tests.e2e.conftest import ServiceThread, StartService
from tests.e2e.wallet import send_item

ETH = 10**18


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True, settings={"admin_token": OPERATOR_TOKEN})


def _body(user: LocalAccount, recipient: str, **fields: Any) -> dict[str, Any]:
    return {
        "user": user.address,
        "recipient": recipient,
        "originChainId": ORIGIN,
        "destinationChainId": DESTINATION,
        "originCurrency": NATIVE,
        "destinationCurrency": NATIVE,
        "amount": str(ETH // 10),
        "tradeType": "EXACT_INPUT",
        "useDepositAddress": True,
        **fields,
    }


def _pay(devnet: RunningDevnet, payer: LocalAccount, item: dict[str, Any]) -> str:
    """Send a step's item as a wallet would (a plain transfer)."""
    return send_item(Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN])), payer, item)


def _record(client: httpx.Client, key: str, request_id: str) -> dict[str, Any]:
    listed = client.get(
        "/requests/v3", params={"id": request_id}, headers={"x-api-key": key}
    ).json()
    (record,) = listed["requests"]
    return dict(record)


def test_strict_native_deposit_address_is_swept_and_filled(
    devnet: RunningDevnet, service: ServiceThread, client: httpx.Client
) -> None:
    key = new_api_key(client, "deposit-addresses")
    client.headers["x-api-key"] = key
    user = funded_user(devnet)
    recipient = Account.create().address
    quote = request_quote(client, _body(user, recipient))
    (step,) = quote["steps"]
    address = step["depositAddress"]
    item = step["items"][0]["data"]
    assert Web3.is_address(address) and item["to"] == address.lower()
    assert item["data"] == "0x" and int(item["value"]) == ETH // 10
    request_id = step["requestId"]
    assert balance(devnet, ORIGIN, NATIVE, address) == 0

    transfer = _pay(devnet, user, item)
    status = final_status(client, request_id, timeout=60)
    assert status["status"] == "success"

    # The address was deployed and emptied into the Depository; the recipient was paid.
    assert balance(devnet, ORIGIN, NATIVE, address) == 0
    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    assert web3.eth.get_code(Web3.to_checksum_address(address)) != b""
    depository = devnet.deployment.chains[0].contracts.depository
    assert balance(devnet, ORIGIN, NATIVE, depository) >= ETH // 10
    paid = balance(devnet, DESTINATION, NATIVE, recipient)
    assert paid == int(quote["details"]["currencyOut"]["amount"])

    record = _record(client, key, request_id)
    assert record["depositAddress"] == {
        "address": address.lower(),
        "type": "strict",
        "depositor": user.address.lower(),
        "depositTxHash": transfer,
        "recoveryAddress": None,
    }
    assert "deposit_address" in record["features"]
    by_address = client.get(
        "/requests/v3", params={"depositAddress": address}, headers={"x-api-key": key}
    ).json()
    assert [r["id"] for r in by_address["requests"]] == [request_id]
    by_term = client.get(
        "/requests/v3", params={"term": address}, headers={"x-api-key": key}
    ).json()
    assert [r["id"] for r in by_term["requests"]] == [request_id]
