"""App fees are claimed and paid on chain: with the official SDK (getAppFees, claimAppFees)
and over plain HTTP, on the devnet, against the real service and its workers."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import select

from crossfill.contracts.toolchain import node_modules_dir
from crossfill.store.tables import AppFee, AppFeeClaim
from crossfill_client.models import AppFee as AppFeeShare
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    NATIVE,
    ORIGIN,
    balance,
    bridge_request,
    funded_user,
    rpc_urls,
    stored_rows,
)
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.e2e.wire import validate_against
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for

SCRIPT = Path(__file__).parent / "sdk" / "claim_app_fees.mjs"
FEE_BPS = 100


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


@pytest.fixture
def http(service: ServiceThread) -> Any:
    with httpx.Client(base_url=service.base_url, timeout=10) as client:
        yield client


def earn_app_fee(http: httpx.Client, devnet: RunningDevnet, recipient: str) -> int:
    """A user bridges 0.1 ETH carrying a 1% app fee for `recipient` to success (through the
    service `http` talks to); the fee."""
    user = funded_user(devnet)
    fee = AppFeeShare(recipient=recipient, fee=FEE_BPS)
    with UserClient(str(http.base_url).rstrip("/"), rpc_urls(devnet)) as user_client:
        quote = user_client.quote(bridge_request(user.address, app_fees=[fee]))
        succeeded(user_client.execute(quote, evm_wallet(user)))
    assert quote.fees.app is not None
    return quote.fees.app.amount


def claim_with_sdk(service: ServiceThread, wallet: LocalAccount) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None, "node is required by the SDK test"
    assert (node_modules_dir() / "@relayprotocol" / "relay-sdk").is_dir()
    arguments = {
        "baseApiUrl": service.base_url,
        "privateKey": "0x" + bytes(wallet.key).hex(),
        "chainId": ORIGIN,
        "currency": NATIVE,
    }
    run = subprocess.run(
        [node, str(SCRIPT), json.dumps(arguments)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    outcome: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return outcome


def test_sdk_claims_app_fees_and_the_recipient_is_paid_on_chain(service, http, devnet) -> None:
    recipient: LocalAccount = Account.create()
    owed = earn_app_fee(http, devnet, recipient.address)
    shown = http.get(f"/app-fees/{recipient.address}/balances")
    assert shown.status_code == 200
    validate_against("app-fee-balances", shown.json())
    before_claim = balance(devnet, ORIGIN, NATIVE, recipient.address)

    outcome = claim_with_sdk(service, recipient)

    (owed_before,) = outcome["before"]
    assert owed_before["amount"] == str(owed)
    assert owed_before["currency"]["chainId"] == ORIGIN
    assert outcome["after"] == []
    (step,) = outcome["steps"]
    assert step["kind"] == "signature"
    (item,) = step["items"]
    assert item["status"] == "complete" and item["checkStatus"] == "success"
    (payout,) = item["txHashes"]
    # The service pays the gas: the recipient receives exactly what it was owed.
    assert balance(devnet, ORIGIN, NATIVE, recipient.address) - before_claim == owed
    (claim,) = stored_rows(
        service, select(AppFeeClaim).where(AppFeeClaim.claim_id == step["requestId"])
    )
    assert (claim.state, claim.tx_hash, claim.amount) == ("paid", payout["txHash"], str(owed))
    shares = stored_rows(
        service, select(AppFee).where(AppFee.recipient == recipient.address.lower())
    )
    assert [(share.state, share.claim_id) for share in shares] == [("paid", claim.id)]


def prepared_claim(http: httpx.Client, wallet: str, **body: Any) -> dict[str, Any]:
    response = http.post(
        f"/app-fees/{wallet}/claim", json={"chainId": ORIGIN, "currency": NATIVE, **body}
    )
    assert response.status_code == 200, response.text
    validate_against("app-fee-claim", response.json())
    item: dict[str, Any] = response.json()["steps"][0]["items"][0]
    return item


def signed(item: dict[str, Any], signer: LocalAccount) -> str:
    """The claim step signed as a wallet signs EIP-712 (uint256 values as integers)."""
    sign = item["data"]["sign"]
    value = {**sign["value"], "amount": int(sign["value"]["amount"])}
    signature: str = Account.sign_typed_data(
        signer.key, sign["domain"], sign["types"], value
    ).signature.to_0x_hex()
    return signature


def file(http: httpx.Client, item: dict[str, Any], signature: str) -> httpx.Response:
    post = item["data"]["post"]
    return http.post(post["endpoint"], params={"signature": signature}, json=post["body"])


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store_http(request: pytest.FixtureRequest, start_service: StartService) -> Any:
    """The service and its workers on each database backend."""
    settings = {}
    if request.param == "postgresql":
        settings["database_url"] = request.getfixturevalue("postgres_url")
    service = start_service(run_workers=True, settings=settings)
    with httpx.Client(base_url=service.base_url, timeout=10) as client:
        yield client


def test_a_claim_is_paid_once_however_often_it_is_filed(any_store_http, devnet) -> None:
    http = any_store_http
    recipient: LocalAccount = Account.create()
    owed = earn_app_fee(http, devnet, recipient.address)
    item = prepared_claim(http, recipient.address)
    signature = signed(item, recipient)
    claim_ids = {file(http, item, signature).json()["claimId"] for _ in range(3)}
    assert len(claim_ids) == 1

    def paid() -> bool:
        status = http.get(item["check"]["endpoint"]).json()
        return bool(status["status"] == "success")

    assert wait_for(paid, timeout=30, interval=0.2)
    status = http.get(item["check"]["endpoint"]).json()
    validate_against("app-fee-claim-status", status)
    assert status["currency"]["amount"] == str(owed)
    assert balance(devnet, ORIGIN, NATIVE, recipient.address) == owed
    assert file(http, item, signature).status_code == 200  # still the one claim, paid
    assert balance(devnet, ORIGIN, NATIVE, recipient.address) == owed
    nothing_left = http.post(
        f"/app-fees/{recipient.address}/claim", json={"chainId": ORIGIN, "currency": NATIVE}
    )
    assert nothing_left.status_code == 400
    assert "nothing to claim" in nothing_left.json()["message"]


def test_terms_prepared_before_another_claim_are_refused(service, http, devnet) -> None:
    recipient: LocalAccount = Account.create()
    earn_app_fee(http, devnet, recipient.address)
    first, second = prepared_claim(http, recipient.address), prepared_claim(http, recipient.address)
    second["data"]["post"]["body"]["expiry"] += 1  # other terms over the same shares
    second["data"]["sign"]["value"]["expiry"] += 1
    assert file(http, first, signed(first, recipient)).status_code == 200
    refused = file(http, second, signed(second, recipient))
    assert refused.status_code == 409
    assert refused.json() == {
        "message": "the owed balance changed since this claim was prepared; claim again",
        "statusCode": 409,
    }


def test_a_claim_signed_by_another_wallet_is_refused(service, http, devnet) -> None:
    recipient: LocalAccount = Account.create()
    earn_app_fee(http, devnet, recipient.address)
    item = prepared_claim(http, recipient.address)
    refused = file(http, item, signed(item, Account.create()))
    assert refused.status_code == 401
    assert refused.json()["message"] == (
        f"signature: the claim is not signed by {recipient.address.lower()}"
    )
    (share,) = stored_rows(
        service, select(AppFee).where(AppFee.recipient == recipient.address.lower())
    )
    assert share.state == "owed"
