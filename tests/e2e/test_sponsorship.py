"""Fee sponsorship: an API key's sponsor wallet pays the selected fees, up to a cap.

The sponsor approves the solver, which pulls the sponsored value once the request succeeds.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import select
from web3 import Web3

from crossfill.contracts.calldata import erc20_approve
from crossfill.devnet.anvil import anvil_rpc
from crossfill.store.tables import SentTransaction, SponsorPayment
from crossfill_client import QuoteRequest
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    V2_STILL_SERVED,
    balance,
    bridge_request,
    final_status,
    funded_user,
    journal,
    request_quote,
    rpc_urls,
    stored_rows,
    usdc,
)
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.e2e.wire import validate_against
from tests.support.service import ServiceThread, StartService, run_cli
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps, send_item

OPERATOR = {"Authorization": "Bearer operator-token"}
AMOUNT = 10**18 // 4


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(
        run_workers=True,
        settings={"admin_token": "operator-token"},
        wall_clock=lambda: V2_STILL_SERVED,
    )


def _sponsor_wallet(devnet: RunningDevnet, *, approve: bool) -> LocalAccount:
    """A wallet with native gas and USDC on the origin chain, approving the solver or not."""
    wallet = funded_user(devnet, usdc_amount=1_000 * 10**6)
    if approve:
        token = usdc(devnet, ORIGIN)
        data = "0x" + erc20_approve(devnet.deployment.solver.address, 2**256 - 1).hex()
        web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
        item = {"to": token, "data": data, "value": "0", "chainId": ORIGIN}
        send_item(web3, wallet, item)
    return wallet


def _sponsored_key(
    service: ServiceThread, devnet: RunningDevnet, wallet: str, tmp_path, *, via_api: bool = False
) -> str:
    """A new API key whose sponsor is `wallet`, set with the CLI or the admin API."""
    with httpx.Client(base_url=service.base_url, timeout=10, headers=OPERATOR) as http:
        created = http.post("/admin/api-keys", json={"name": "sponsoring app"})
        assert created.status_code == 201, created.text
        if via_api:
            setting = {"wallet": wallet, "chainId": ORIGIN, "currency": usdc(devnet, ORIGIN)}
            path = f"/admin/api-keys/{created.json()['id']}/sponsor"
            assert http.put(path, json={**setting, "chainId": 1}).status_code == 400
            answered = http.put(path, json=setting)
            assert answered.status_code == 200, answered.text
            assert answered.json()["sponsor"]["wallet"] == wallet.lower()
            return str(created.json()["key"])
    key: str = created.json()["key"]
    configured = run_cli(
        "keys",
        "sponsor",
        str(created.json()["id"]),
        "--wallet",
        wallet,
        "--chain",
        str(ORIGIN),
        "--currency",
        usdc(devnet, ORIGIN),
        home=tmp_path,
        deployment_file=devnet.deployment_path,
    )
    assert configured.returncode == 0, configured.stderr
    return key


def _request(user: str, recipient: str, **extra: Any) -> QuoteRequest:
    return bridge_request(user, amount=AMOUNT, recipient=recipient, subsidize_fees=True, **extra)


def _usd_micros(text: str) -> int:
    return int(Decimal(text) * 10**6)


def _run_sponsored(
    service: ServiceThread, devnet: RunningDevnet, key: str, sponsor: str, **extra: Any
) -> tuple[Any, dict[str, Any], int, int]:
    """A user of the key's app quotes, executes and waits; then the sponsor's pull. The quote
    as it came on the wire, the v3 record, what the recipient received, what the sponsor
    paid."""
    user, recipient = funded_user(devnet), Account.create().address
    token = usdc(devnet, ORIGIN)
    sponsor_before = balance(devnet, ORIGIN, token, sponsor)
    with UserClient(service.base_url, rpc_urls(devnet), api_key=key) as user_client:
        quote = user_client.quote(_request(user.address, recipient, **extra))
        wire: Any = user_client.answered("/quote/v2")
        validate_against("quote", wire)
        succeeded(user_client.execute(quote, evm_wallet(user)))
    assert wait_for(lambda: balance(devnet, ORIGIN, token, sponsor) < sponsor_before, timeout=20), (
        "the solver never pulled the sponsor payment"
    )
    with httpx.Client(base_url=service.base_url, timeout=10, headers={"x-api-key": key}) as http:
        body = http.get("/requests/v3", params={"id": quote.request_id}).json()
        validate_against("requests-v3", body)
        listed = body["requests"]
        [legacy] = http.get("/requests/v2", params={"id": quote.request_id}).json()["requests"]
        assert legacy["data"]["subsidizedRequest"] is True
        assert (
            legacy["data"]["subsidizedFee"]["origin"]["amount"]
            == wire["fees"]["subsidized"]["amount"]
        )
    received = balance(devnet, DESTINATION, NATIVE, recipient)
    return wire, listed[0], received, sponsor_before - balance(devnet, ORIGIN, token, sponsor)


def test_fully_sponsored_bridge_delivers_the_whole_input(service, devnet, tmp_path) -> None:
    sponsor = _sponsor_wallet(devnet, approve=True)
    key = _sponsored_key(service, devnet, sponsor.address, tmp_path)
    quote, record, received, paid = _run_sponsored(service, devnet, key, sponsor.address)

    quoted = quote["feeSponsorship"]["quoted"]
    assert quoted["selectedComponents"] == ["execution", "relay"] and not quoted["capHit"]
    assert quote["fees"]["subsidized"]["amount"] == quote["fees"]["relayer"]["amount"]
    assert quoted["userPaysTotal"]["amount"] == "0"
    # The user pays no fee at all: the recipient gets every wei deposited.
    assert received == AMOUNT == int(quote["details"]["currencyOut"]["amount"])
    # USDC at $1: the sponsor pays the sponsored value in micro-USD, rounded up.
    assert paid - _usd_micros(quoted["sponsoredTotal"]["amountUsd"]) in (0, 1)
    actual = record["data"]["feeSponsorship"]["actual"]
    assert actual["sponsorPayment"] == {
        "amount": str(paid),
        "address": sponsor.address.lower(),
        "chainId": ORIGIN,
    }
    assert "platform" in actual["components"]


def test_partially_sponsored_bridge_hits_the_cap(service, devnet, tmp_path) -> None:
    sponsor = _sponsor_wallet(devnet, approve=True)
    key = _sponsored_key(service, devnet, sponsor.address, tmp_path, via_api=True)
    cap = 100_000  # $0.10, less than the fees
    quote, _, received, paid = _run_sponsored(
        service, devnet, key, sponsor.address, maxSubsidizationAmount=str(cap)
    )
    quoted = quote["feeSponsorship"]["quoted"]
    assert quoted["capHit"] and quoted["maxSubsidizationAmount"] == str(cap)
    sponsored = int(quoted["sponsoredTotal"]["amount"])
    fees = int(quote["fees"]["relayer"]["amount"])
    assert 0 < sponsored < fees
    assert _usd_micros(quoted["sponsoredTotal"]["amountUsd"]) <= cap
    assert int(quoted["userPaysTotal"]["amount"]) == fees - sponsored
    assert received == AMOUNT - (fees - sponsored) == int(quote["details"]["currencyOut"]["amount"])
    assert 0 < paid <= cap + 1


def test_sponsor_that_cannot_pay_is_refused(service, devnet, tmp_path) -> None:
    sponsor = _sponsor_wallet(devnet, approve=False)
    key = _sponsored_key(service, devnet, sponsor.address, tmp_path)
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10, headers={"x-api-key": key}) as http:
        refused = http.post("/quote/v2", json=_request(user.address, user.address).wire())
        assert refused.status_code == 400, refused.text
        assert refused.json()["errorCode"] == "SPONSOR_BALANCE_TOO_LOW"
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        anonymous = http.post("/quote/v2", json=_request(user.address, user.address).wire())
        assert anonymous.status_code == 403, anonymous.text
        assert anonymous.json()["errorCode"] == "FORBIDDEN"


def test_unknown_sponsored_component_is_a_bad_request(service, devnet, tmp_path) -> None:
    sponsor = _sponsor_wallet(devnet, approve=True)
    key = _sponsored_key(service, devnet, sponsor.address, tmp_path)
    with httpx.Client(base_url=service.base_url, timeout=10, headers={"x-api-key": key}) as http:
        response = http.post(
            "/quote/v2",
            json=_request(
                Account.create().address,
                Account.create().address,
                sponsoredFeeComponents=["everything"],
            ).wire(),
        )
    assert response.status_code == 400
    assert "sponsoredFeeComponents" in response.json()["message"]


def test_sponsor_pull_in_flight_across_a_restart_is_paid_once(
    start_service, devnet, tmp_path
) -> None:
    """The pull is signed and broadcast but not mined when the service stops; the restarted
    collector finds it in the journal, waits for it, and never signs a second one."""
    service = start_service(run_workers=True, settings={"admin_token": "operator-token"})
    sponsor = _sponsor_wallet(devnet, approve=True)
    key = _sponsored_key(service, devnet, sponsor.address, tmp_path)
    token = usdc(devnet, ORIGIN)
    sponsor_before = balance(devnet, ORIGIN, token, sponsor.address)
    user = funded_user(devnet)
    origin_rpc = rpc_urls(devnet)[ORIGIN]
    with httpx.Client(base_url=service.base_url, timeout=10, headers={"x-api-key": key}) as http:
        quote = request_quote(http, _request(user.address, Account.create().address).wire())
        request_id = quote["steps"][-1]["requestId"]
        sent = execute_steps(quote, user, rpc_urls(devnet))
        anvil_rpc(origin_rpc, "evm_setAutomine", [False])  # the pull will wait in the mempool
        try:
            http.post(
                "/transactions/index", json={"txHash": sent["deposit"], "chainId": str(ORIGIN)}
            )
            assert final_status(http, request_id)["status"] == "success"
            assert wait_for(lambda: len(_pulls(service, request_id)) == 1, timeout=20)
            service.stop()
            restarted = start_service(run_workers=True, settings={"admin_token": "operator-token"})
        finally:
            anvil_rpc(origin_rpc, "evm_setAutomine", [True])
            anvil_rpc(origin_rpc, "evm_mine", [])

    def paid() -> bool:
        [payment] = stored_rows(
            restarted, select(SponsorPayment).where(SponsorPayment.request_id == request_id)
        )
        return bool(payment.state == "paid")

    assert wait_for(paid, timeout=20)
    [pull] = _pulls(restarted, request_id)
    assert pull.status == "mined"
    paid_amount = sponsor_before - balance(devnet, ORIGIN, token, sponsor.address)
    sponsored = _usd_micros(quote["feeSponsorship"]["quoted"]["sponsoredTotal"]["amountUsd"])
    assert paid_amount - sponsored in (0, 1)  # pulled once, not twice


def _pulls(service: ServiceThread, request_id: str) -> list[SentTransaction]:
    return [row for row in journal(service, request_id) if row.purpose == "sponsor"]


def test_sponsor_setting_rejects_bad_input_and_can_be_cleared(service, devnet) -> None:
    wallet = Account.create().address
    with httpx.Client(base_url=service.base_url, timeout=10, headers=OPERATOR) as http:
        key_id = http.post("/admin/api-keys", json={"name": "app"}).json()["id"]
        path = f"/admin/api-keys/{key_id}/sponsor"
        good = {"wallet": wallet, "chainId": ORIGIN, "currency": usdc(devnet, ORIGIN)}
        for bad in (
            {"wallet": wallet},
            {**good, "wallet": "0x12"},
            {**good, "currency": NATIVE},
            {**good, "chainId": "one"},
            {**good, "extra": 1},
        ):
            refused = http.put(path, json=bad)
            assert refused.status_code == 400, (bad, refused.text)
            assert refused.json()["statusCode"] == 400 and refused.json()["message"]
        assert http.put("/admin/api-keys/999999/sponsor", json=good).status_code == 404
        assert http.put(path, json=good).json()["sponsor"]["wallet"] == wallet.lower()
        cleared = http.delete(path)
        assert cleared.status_code == 200 and cleared.json()["sponsor"] is None
