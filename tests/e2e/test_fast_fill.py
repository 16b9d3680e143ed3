"""POST /fast-fill with fast fills turned on: a request is filled on its deposit seen on chain,
before the confirmations its value calls for, backed by the app balance of the key's sponsor
wallet; the deposit confirms later and the fill stands. Refusals: no sponsor wallet, another
key's request, no deposit seen yet, more than the balance covers."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from eth_account import Account

from crossfill.config.deployment import FastFillSettings
from crossfill.devnet.anvil import anvil_rpc
from crossfill.domain.confirmations import ConfirmationTier
from crossfill.kinds.evm.config import evm_chains
from crossfill_client import RequestStatus
from crossfill_client.models import AppFee
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    OPERATOR,
    OPERATOR_TOKEN,
    ORIGIN,
    balance,
    bridge_request,
    funded_user,
    listed_v3,
    new_api_key,
    rpc_urls,
    usdc,
)
from tests.e2e.user_client import SENT_ONLY, UserClient, UserClients, evm_wallet
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for

# Origin deposits wait for this many blocks: none confirms while a test does not mine them.
CONFIRMATIONS = 40
ETHER = 10**18


@pytest.fixture
def service(start_service: StartService, devnet: RunningDevnet) -> ServiceThread:
    origin, *others = evm_chains(devnet.deployment)
    slow = origin.model_copy(update={"confirmations": (ConfirmationTier(blocks=CONFIRMATIONS),)})
    deployment = devnet.deployment.model_copy(
        update={"chains": (slow, *others), "fast_fill": FastFillSettings(enabled=True)}
    )
    return start_service(deployment, run_workers=True, settings={"admin_token": OPERATOR_TOKEN})


def _mine_origin(devnet: RunningDevnet) -> None:
    """Enough origin blocks for every deposit so far to be confirmed."""
    anvil_rpc(rpc_urls(devnet)[ORIGIN], "anvil_mine", [hex(CONFIRMATIONS + 1)])


def _sponsored_key(http: httpx.Client, devnet: RunningDevnet, wallet: str) -> str:
    created = http.post("/admin/api-keys", json={"name": "fast-filling app"}, headers=OPERATOR)
    assert created.status_code == 201, created.text
    setting = {"wallet": wallet, "chainId": ORIGIN, "currency": usdc(devnet, ORIGIN)}
    path = f"/admin/api-keys/{created.json()['id']}/sponsor"
    assert http.put(path, json=setting, headers=OPERATOR).status_code == 200
    return str(created.json()["key"])


def _earn_app_fees(
    user_client: UserClient, http: httpx.Client, devnet: RunningDevnet, wallet: str
) -> float:
    """A user's bridge paying `wallet` a 10% app fee, filled once its deposit confirms; the
    wallet's app balance in USD."""
    user = funded_user(devnet)
    fee = AppFee(recipient=wallet, fee=1000)
    quote = user_client.quote(bridge_request(user.address, app_fees=[fee]))
    user_client.execute(quote, evm_wallet(user), options=SENT_ONLY)
    _mine_origin(devnet)
    assert user_client.wait(quote.request_id).status is RequestStatus.SUCCESS
    balances = http.get(f"/app-fees/{wallet}/balances").json()
    assert balances["outstandingFastFillBalanceUsd"] == 0
    earned: float = balances["availableBalanceUsd"]
    assert earned > 0
    return earned


def _fast_fill(http: httpx.Client, key: str, **body: Any) -> httpx.Response:
    return http.post("/fast-fill", json=body, headers={"x-api-key": key})


def test_a_seen_deposit_is_filled_before_its_confirmations(
    service: ServiceThread, devnet: RunningDevnet, user_clients: UserClients
) -> None:
    wallet = Account.create().address
    recipient = Account.create().address
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        key = _sponsored_key(http, devnet, wallet)
        earned = _earn_app_fees(user_clients(), http, devnet, wallet)
        user, user_client = funded_user(devnet), user_clients(key)
        quote = user_client.quote(
            bridge_request(user.address, recipient=recipient, amount=ETHER // 1000)
        )
        request_id = quote.request_id
        early = _fast_fill(http, key, requestId=request_id)
        assert early.status_code == 400 and "seen" in early.json()["message"]
        (deposit,) = user_client.execute(quote, evm_wallet(user), options=SENT_ONLY).transactions

        answers: list[httpx.Response] = []

        def queued() -> bool:  # once the indexer has seen the deposit
            answers.append(_fast_fill(http, key, requestId=request_id, maxFillAmountUsd=earned))
            return answers[-1].status_code == 200

        assert wait_for(queued, timeout=20, interval=0.3), answers[-1].text
        assert answers[-1].json() == {"message": "Request successfully queued for fast fill."}
        status = user_client.wait(request_id)
        assert status.status is RequestStatus.SUCCESS, status
        received = balance(devnet, DESTINATION, NATIVE, recipient)
        assert received == quote.details.currency_out.amount
        again = _fast_fill(http, key, requestId=request_id)
        assert again.json() == {"message": "Request already queued or executed."}

        # Filled on a deposit not yet confirmed: the app's balance answers for it meanwhile.
        balances = http.get(f"/app-fees/{wallet}/balances").json()
        assert balances["outstandingFastFillBalanceUsd"] > 0
        assert balances["availableBalanceUsd"] == pytest.approx(
            balances["totalBalanceUsd"] - balances["outstandingFastFillBalanceUsd"]
        )
        (record,) = listed_v3(http, key, id=request_id)["requests"]
        assert "fast_fill" in record["features"]
        assert record["data"]["triggeredByFastFill"] is True
        assert record["data"]["inTxs"] == []  # the deposit is not confirmed yet

        _mine_origin(devnet)

        def settled() -> bool:
            (listed,) = listed_v3(http, key, id=request_id)["requests"]
            return [tx["txHash"] for tx in listed["data"]["inTxs"]] == [deposit.tx_id]

        assert wait_for(settled, timeout=20, interval=0.3)
        assert http.get(f"/app-fees/{wallet}/balances").json()["outstandingFastFillBalanceUsd"] == 0
        assert user_client.wait(request_id).status is RequestStatus.SUCCESS


def test_fast_fills_are_refused_without_collateral_or_authority(
    service: ServiceThread, devnet: RunningDevnet, user_clients: UserClients
) -> None:
    wallet = Account.create().address
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        unsponsored = new_api_key(http, "no sponsor")
        key = _sponsored_key(http, devnet, wallet)
        user, user_client = funded_user(devnet), user_clients(key)
        quote = user_client.quote(bridge_request(user.address))
        request_id = quote.request_id
        user_client.execute(quote, evm_wallet(user), options=SENT_ONLY)

        no_sponsor = _fast_fill(http, unsponsored, requestId=request_id)
        assert no_sponsor.status_code == 403 and "sponsoring wallet" in no_sponsor.json()["message"]
        other = _sponsored_key(http, devnet, wallet)
        assert _fast_fill(http, other, requestId=request_id).status_code == 404

        def refused_for_balance() -> bool:  # once the deposit is seen, nothing covers it
            answer = _fast_fill(http, key, requestId=request_id)
            return answer.status_code == 403 and answer.json()["errorCode"] == "INSUFFICIENT_FUNDS"

        assert wait_for(refused_for_balance, timeout=20, interval=0.3)
        capped = _fast_fill(http, key, requestId=request_id, maxFillAmountUsd=0.01)
        assert capped.status_code == 400 and "maxFillAmountUsd" in capped.json()["message"]
        status = http.get("/intents/status/v3", params={"requestId": request_id}).json()
        assert status["status"] == "waiting"  # nothing was filled
        _mine_origin(devnet)
        assert user_client.wait(request_id).status is RequestStatus.SUCCESS  # filled as usual
