"""POST /execute on the devnet: a user holding no ether bridges USDC in one sponsored type-4
transaction (EIP-7702 authorization and batch signed with eth-account)."""

from __future__ import annotations

import httpx
from eth_account import Account
from eth_typing import HexStr
from sqlalchemy import select

from crossfill.devnet import accounts
from crossfill.store.tables import GaslessExecution
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    OPERATOR_TOKEN,
    ORIGIN,
    V2_STILL_SERVED,
    balance,
    final_status,
    journal,
    listed_v3,
    published_statuses,
    stored_rows,
    usdc,
)
from tests.e2e.gasless import (
    deploy_delegate,
    execute_body,
    origin_web3,
    quote_calls,
    signed_batch,
    sponsored_key,
    usdc_bridge_quote,
    user_with_usdc,
)
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for

AMOUNT = 20_000_000


def _execution(service: ServiceThread, request_id: str) -> GaslessExecution:
    (execution,) = stored_rows(
        service, select(GaslessExecution).where(GaslessExecution.request_id == request_id)
    )
    assert isinstance(execution, GaslessExecution)
    return execution


def test_user_without_ether_bridges_usdc_through_execute(
    start_service: StartService, devnet: RunningDevnet, database: str | None
) -> None:
    settings: dict[str, object] = {"admin_token": OPERATOR_TOKEN}
    if database is not None:
        settings["database_url"] = database
    service = start_service(run_workers=True, settings=settings, wall_clock=lambda: V2_STILL_SERVED)
    web3 = origin_web3(devnet)
    delegate = deploy_delegate(devnet)
    user = user_with_usdc(devnet, 50_000_000)
    recipient = Account.create().address
    sponsor = accounts.gas_sponsor().address
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        key, _ = sponsored_key(http, devnet)
        quote = usdc_bridge_quote(http, devnet, user.address, recipient, AMOUNT, key)
        request_id = quote["steps"][-1]["requestId"]
        batch = signed_batch(web3, user, delegate, quote_calls(quote))
        sponsor_before = balance(devnet, ORIGIN, NATIVE, sponsor)
        answer = http.post(
            "/execute",
            json=execute_body(user.address, batch, request_id, subsidize=True),
            headers={"x-api-key": key},
        )
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"message": "Transaction submitted", "requestId": request_id}
        status = final_status(http, request_id, timeout=60)
        # The fill may land before the executor's next tick records what the sponsor spent.
        assert wait_for(lambda: _execution(service, request_id).state == "mined", timeout=10)
        (v3,) = listed_v3(http, key, id=request_id)["requests"]
        v2 = http.get("/requests/v2", params={"id": request_id}).json()["requests"]

    assert status["status"] == "success", status
    assert balance(devnet, ORIGIN, NATIVE, user.address) == 0
    assert balance(devnet, ORIGIN, usdc(devnet, ORIGIN), user.address) == 50_000_000 - AMOUNT
    received = balance(devnet, DESTINATION, usdc(devnet, DESTINATION), recipient)
    assert received == int(quote["details"]["currencyOut"]["amount"])
    assert web3.eth.get_code(user.address).hex() == "ef0100" + delegate[2:].lower()

    (sent,) = journal(service, request_id)[:1]
    assert sent.purpose == "execute"
    assert sent.sender == sponsor.lower()
    assert web3.eth.get_transaction(HexStr(sent.tx_hash))["type"] == 4
    assert status["inTxHashes"] == [sent.tx_hash]
    execution = _execution(service, request_id)
    spent = sponsor_before - balance(devnet, ORIGIN, NATIVE, sponsor)
    assert execution.spent_wei == spent > 0
    assert v3["requestType"] == "Bridge"
    assert "gasless_execution" in v3["features"]
    assert v3["data"]["feeSponsorship"]["actual"]["gasPayment"] == {
        "amount": str(spent),
        "address": sponsor.lower(),
        "chainId": ORIGIN,
        "currency": NATIVE,
    }
    (in_tx,) = v3["data"]["inTxs"]
    assert (in_tx["txHash"], in_tx["fee"]) == (sent.tx_hash, str(spent))
    assert [record["data"]["subsidizedRequest"] for record in v2] == [True]
    assert published_statuses(service, request_id) == [
        "depositing",
        "pending",
        "submitted",
        "success",
    ]
