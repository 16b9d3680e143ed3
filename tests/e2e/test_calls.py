"""Bridge-and-call: the request's `txs` run on the destination through the Router after the
funds arrive, here into a devnet vault deposited on the recipient's behalf."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from eth_account import Account
from sqlalchemy import select
from web3 import Web3

from crossfill.contracts.calldata import erc20_approve
from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at, deploy, signing_web3
from crossfill.store.tables import Request
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    final_status,
    funded_user,
    request_quote,
    rpc_urls,
    stored_rows,
    usdc,
)
from tests.support.service import ServiceThread, StartService
from tests.support.wallets.evm import execute_steps

ETHER = 10**18


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


@pytest.fixture(scope="module")
def vault(devnet: RunningDevnet) -> Any:
    web3 = signing_web3(rpc_urls(devnet)[DESTINATION], accounts.deployer())
    return contract_at(web3, "TestVault", deploy(web3, "TestVault"))


def _deposit_for(vault: Any, account: str) -> str:
    return str(vault.encode_abi("deposit", args=[Web3.to_checksum_address(account)]))


def _call_body(
    user: str, recipient: str, currency: tuple[str, str], amount: int, txs: list[dict[str, str]]
) -> dict[str, Any]:
    return {
        "user": user,
        "recipient": recipient,
        "originChainId": ORIGIN,
        "destinationChainId": DESTINATION,
        "originCurrency": currency[0],
        "destinationCurrency": currency[1],
        "amount": str(amount),
        "tradeType": "EXACT_OUTPUT",
        "txs": txs,
    }


def _run(service: ServiceThread, devnet: RunningDevnet, user: Any, body: dict[str, Any]):
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, body)
        sent = execute_steps(quote, user, rpc_urls(devnet))
        http.post("/transactions/index", json={"txHash": sent["deposit"], "chainId": str(ORIGIN)})
        status = final_status(http, quote["steps"][-1]["requestId"])
    return quote, status


def test_bridge_and_call_deposits_into_a_vault_for_the_recipient(service, devnet, vault) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    value = ETHER // 10
    tx = {"to": vault.address, "value": str(value), "data": _deposit_for(vault, recipient)}
    quote, status = _run(
        service, devnet, user, _call_body(user.address, recipient, (NATIVE, NATIVE), value, [tx])
    )
    assert status["status"] == "success", status
    assert vault.functions.balances(recipient, NATIVE).call() == value
    request_id = quote["steps"][-1]["requestId"]
    [row] = stored_rows(service, select(Request).where(Request.id == request_id))
    assert row.request_type == "Call"


def test_bridge_and_call_with_usdc_approves_and_deposits(service, devnet, vault) -> None:
    user, recipient = funded_user(devnet, usdc_amount=100 * 10**6), Account.create().address
    token = usdc(devnet, DESTINATION)
    amount = 40 * 10**6
    txs = [
        {"to": token, "value": "0", "data": "0x" + erc20_approve(vault.address, amount).hex()},
        {
            "to": vault.address,
            "value": "0",
            "data": str(
                vault.encode_abi(
                    "depositToken",
                    args=[token, amount, Web3.to_checksum_address(recipient)],
                )
            ),
        },
    ]
    body = _call_body(user.address, recipient, (usdc(devnet, ORIGIN), token), amount, txs)
    _, status = _run(service, devnet, user, body)
    assert status["status"] == "success", status
    assert vault.functions.balances(recipient, token).call() == amount


def test_calls_failing_simulation_are_invalid_extra_txs(service, devnet, vault) -> None:
    user = funded_user(devnet)
    reverting = {"to": vault.address, "value": "1000", "data": _deposit_for(vault, NATIVE)}
    body = _call_body(user.address, user.address, (NATIVE, NATIVE), 10**15, [reverting])
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        response = http.post("/quote/v2", json=body)
        assert response.status_code == 400, response.text
        assert response.json()["errorCode"] == "INVALID_EXTRA_TXS"
        too_little_gas = http.post(
            "/quote/v2",
            json={
                **body,
                "txs": [{**reverting, "data": _deposit_for(vault, user.address)}],
                "txsGasLimit": 100,
            },
        )
        assert too_little_gas.status_code == 400, too_little_gas.text
        assert too_little_gas.json()["errorCode"] == "INVALID_EXTRA_TXS"
        assert "txsGasLimit" in too_little_gas.json()["message"]
