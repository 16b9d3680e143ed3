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
from crossfill_client import QuoteRequest
from crossfill_client.models import ExtraTransaction
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    bridge_request,
    funded_user,
    rpc_urls,
    stored_rows,
    usdc,
)
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.support.service import ServiceThread, StartService

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


def _call(
    user: str,
    recipient: str,
    currency: tuple[str, str],
    amount: int,
    txs: list[ExtraTransaction],
) -> QuoteRequest:
    return bridge_request(
        user, currency, amount, recipient=recipient, trade_type="EXACT_OUTPUT", txs=txs
    )


def test_bridge_and_call_deposits_into_a_vault_for_the_recipient(
    service: ServiceThread, devnet: RunningDevnet, vault: Any, user_client: UserClient
) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    value = ETHER // 10
    tx = ExtraTransaction(to=vault.address, value=value, data=_deposit_for(vault, recipient))
    quote = user_client.quote(_call(user.address, recipient, (NATIVE, NATIVE), value, [tx]))
    succeeded(user_client.execute(quote, evm_wallet(user)))
    assert vault.functions.balances(recipient, NATIVE).call() == value
    [row] = stored_rows(service, select(Request).where(Request.id == quote.request_id))
    assert row.request_type == "Call"


def test_bridge_and_call_with_usdc_approves_and_deposits(
    devnet: RunningDevnet, vault: Any, user_client: UserClient
) -> None:
    user, recipient = funded_user(devnet, usdc_amount=100 * 10**6), Account.create().address
    token = usdc(devnet, DESTINATION)
    amount = 40 * 10**6
    txs = [
        ExtraTransaction(to=token, data="0x" + erc20_approve(vault.address, amount).hex()),
        ExtraTransaction(
            to=vault.address,
            data=str(
                vault.encode_abi(
                    "depositToken",
                    args=[token, amount, Web3.to_checksum_address(recipient)],
                )
            ),
        ),
    ]
    request = _call(user.address, recipient, (usdc(devnet, ORIGIN), token), amount, txs)
    succeeded(user_client.execute(user_client.quote(request), evm_wallet(user)))
    assert vault.functions.balances(recipient, token).call() == amount


def test_calls_failing_simulation_are_invalid_extra_txs(service, devnet, vault) -> None:
    user = funded_user(devnet)
    reverting = {"to": vault.address, "value": "1000", "data": _deposit_for(vault, NATIVE)}
    body = _call(
        user.address, user.address, (NATIVE, NATIVE), 10**15, [ExtraTransaction(**reverting)]
    ).wire()
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
