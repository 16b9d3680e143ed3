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
    balance,
    final_status,
    journal,
    published_statuses,
    stored_rows,
    usdc,
)
from tests.e2e.conftest import StartService
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

AMOUNT = 20_000_000


def test_user_without_ether_bridges_usdc_through_execute(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    service = start_service(run_workers=True, settings={"admin_token": OPERATOR_TOKEN})
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
            json=execute_body(user.address, batch, request_id),
            headers={"x-api-key": key},
        )
        assert answer.status_code == 200, answer.text
        assert answer.json() == {"message": "Transaction submitted", "requestId": request_id}
        status = final_status(http, request_id, timeout=60)

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
    (execution,) = stored_rows(
        service, select(GaslessExecution).where(GaslessExecution.request_id == request_id)
    )
    assert execution.state == "mined"
    spent = sponsor_before - balance(devnet, ORIGIN, NATIVE, sponsor)
    assert execution.spent_wei == spent > 0
    assert published_statuses(service, request_id) == [
        "depositing",
        "pending",
        "submitted",
        "success",
    ]
