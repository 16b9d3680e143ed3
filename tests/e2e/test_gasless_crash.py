"""kill -9 the service while an /execute transaction is in flight: after a restart it is
not sent again (one sponsor transaction, one deposit) and the request reaches success."""

from __future__ import annotations

from pathlib import Path

import httpx
from eth_account import Account
from sqlalchemy import select

from crossfill.devnet import accounts
from crossfill.devnet.anvil import anvil_rpc
from crossfill.kinds.evm.config import evm_chains
from crossfill.store.tables import SentTransaction
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, OPERATOR_TOKEN, ORIGIN, balance, final_status, usdc
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
from tests.support.database import rows_in
from tests.support.service import ServiceProcess, service_settings
from tests.support.waiting import wait_for

AMOUNT = 10_000_000


def _execute_journal(database: str, request_id: str) -> list[SentTransaction]:
    return rows_in(
        database,
        select(SentTransaction).where(
            SentTransaction.request_id == request_id, SentTransaction.purpose == "execute"
        ),
    )


def test_execute_in_flight_survives_kill_9_and_is_sent_once(
    devnet: RunningDevnet, tmp_path: Path
) -> None:
    service = ServiceProcess(
        service_settings(tmp_path, devnet.deployment_path, admin_token=OPERATOR_TOKEN)
    )
    service.start()
    origin_rpc = evm_chains(devnet.deployment)[0].rpc_url
    web3 = origin_web3(devnet)
    sponsor = accounts.gas_sponsor().address
    try:
        delegate = deploy_delegate(devnet)
        user = user_with_usdc(devnet, AMOUNT)
        recipient = Account.create().address
        with httpx.Client(base_url=service.base_url, timeout=10) as http:
            key, _ = sponsored_key(http, devnet)
            quote = usdc_bridge_quote(http, devnet, user.address, recipient, AMOUNT, key)
            request_id = quote["steps"][-1]["requestId"]
            batch = signed_batch(web3, user, delegate, quote_calls(quote))
            sponsor_nonce = web3.eth.get_transaction_count(sponsor)
            anvil_rpc(origin_rpc, "evm_setAutomine", [False])  # the transaction stays in flight
            answer = http.post(
                "/execute",
                json=execute_body(user.address, batch, request_id),
                headers={"x-api-key": key},
            )
            assert answer.status_code == 200, answer.text
            assert wait_for(
                lambda: any(
                    row.status == "broadcast"
                    for row in _execute_journal(service.database, request_id)
                ),
                timeout=20,
            )
            service.kill()
            service.start()
            anvil_rpc(origin_rpc, "evm_setAutomine", [True])
            anvil_rpc(origin_rpc, "evm_mine", [])
            status = final_status(http, request_id, timeout=60)
    finally:
        anvil_rpc(origin_rpc, "evm_setAutomine", [True])
        service.stop()

    assert status["status"] == "success", status
    journal = _execute_journal(service.database, request_id)
    assert {row.nonce for row in journal} == {sponsor_nonce}
    assert [row.status for row in journal].count("mined") == 1
    assert web3.eth.get_transaction_count(sponsor) == sponsor_nonce + 1
    assert balance(devnet, ORIGIN, usdc(devnet, ORIGIN), user.address) == 0
    received = balance(devnet, DESTINATION, usdc(devnet, DESTINATION), recipient)
    assert received == int(quote["details"]["currencyOut"]["amount"])
