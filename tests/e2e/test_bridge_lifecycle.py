"""Bridges on the devnet, driven only through the HTTP API and signed like a wallet would."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import select
from web3 import Web3

from crossfill.devnet import accounts
from crossfill.devnet.anvil import set_native_balance
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.store.db import create_engine, session_factory
from crossfill.store.tables import OutboxEvent
from tests.conftest import RunningDevnet
from tests.e2e.conftest import ServiceThread, StartService, validate_against, wait_for
from tests.e2e.wallet import execute_steps

NATIVE = "0x0000000000000000000000000000000000000000"
ORIGIN, DESTINATION = 900001, 900002
TERMINAL = {"success", "refund", "failure"}


def _rpc_urls(devnet: RunningDevnet) -> dict[int, str]:
    return {chain.id: chain.rpc_url for chain in devnet.deployment.chains}


def _usdc(devnet: RunningDevnet, chain_id: int) -> str:
    chain = devnet.deployment.chain(chain_id)
    assert chain is not None
    return next(c.address for c in chain.erc20_currencies if c.symbol == "USDC")


def _funded_user(devnet: RunningDevnet, usdc: int = 0) -> LocalAccount:
    user: LocalAccount = Account.create()
    origin = devnet.deployment.chains[0]
    set_native_balance(origin.rpc_url, user.address, 10 * 10**18)
    if usdc:
        minter = signing_web3(origin.rpc_url, accounts.deployer())
        token = contract_at(minter, "TestUSDC", _usdc(devnet, ORIGIN))
        send(minter, token.functions.mint(user.address, usdc))
    return user


def _balance(devnet: RunningDevnet, chain_id: int, currency: str, holder: str) -> int:
    web3 = Web3(Web3.HTTPProvider(_rpc_urls(devnet)[chain_id]))
    if currency == NATIVE:
        return web3.eth.get_balance(Web3.to_checksum_address(holder))
    return int(
        contract_at(web3, "TestUSDC", currency)
        .functions.balanceOf(Web3.to_checksum_address(holder))
        .call()
    )


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _quote(http: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    responses: list[httpx.Response] = []

    def quoted() -> bool:
        responses.append(http.post("/quote/v2", json=body))
        return responses[-1].status_code != 503

    assert wait_for(quoted, timeout=10)
    assert responses[-1].status_code == 200, responses[-1].text
    quote: dict[str, Any] = responses[-1].json()
    return quote


def _final_status(http: httpx.Client, request_id: str, timeout: float = 40) -> dict[str, Any]:
    seen: list[dict[str, Any]] = []

    def finished() -> bool:
        seen.append(http.get("/intents/status/v3", params={"requestId": request_id}).json())
        return seen[-1]["status"] in TERMINAL

    assert wait_for(finished, timeout=timeout, interval=0.2), seen[-1]
    validate_against("status", seen[-1])
    return seen[-1]


def _published_statuses(service: ServiceThread, request_id: str) -> list[str]:
    async def read() -> list[str]:
        engine = create_engine(service.settings.database)
        try:
            async with session_factory(engine)() as session:
                rows = await session.scalars(
                    select(OutboxEvent)
                    .where(OutboxEvent.request_id == request_id)
                    .order_by(OutboxEvent.id)
                )
                return [row.payload["status"] for row in rows]
        finally:
            await engine.dispose()

    return asyncio.run(read())


def _bridge(
    service: ServiceThread, devnet: RunningDevnet, user: LocalAccount, body: dict[str, Any]
):
    recipient = Account.create().address
    body = {
        "user": user.address,
        "recipient": recipient,
        "originChainId": ORIGIN,
        "destinationChainId": DESTINATION,
        "tradeType": "EXACT_INPUT",
        **body,
    }
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = _quote(http, body)
        request_id = quote["steps"][-1]["requestId"]
        before = _balance(devnet, DESTINATION, body["destinationCurrency"], recipient)
        sent = execute_steps(quote, user, _rpc_urls(devnet))
        hint = http.post(
            "/transactions/index", json={"txHash": sent["deposit"], "chainId": str(ORIGIN)}
        )
        assert hint.status_code == 200
        status = _final_status(http, request_id)
    after = _balance(devnet, DESTINATION, body["destinationCurrency"], recipient)
    return quote, status, sent, after - before


def _assert_filled(service, devnet, quote, status, sent, received) -> None:
    request_id = quote["steps"][-1]["requestId"]
    assert status["status"] == "success", status
    assert received == int(quote["details"]["currencyOut"]["amount"])
    assert status["inTxHashes"] == [sent["deposit"]]
    (fill_hash,) = status["txHashes"]
    destination = Web3(Web3.HTTPProvider(_rpc_urls(devnet)[DESTINATION]))
    fill = destination.eth.get_transaction(fill_hash)
    assert destination.eth.get_transaction_receipt(fill_hash)["status"] == 1
    assert fill["input"][-32:].hex() == quote["protocol"]["v2"]["orderId"][2:]
    assert _published_statuses(service, request_id) == [
        "waiting",
        "pending",
        "submitted",
        "success",
    ]


def test_native_bridge_arrives_in_full(service, devnet) -> None:
    user = _funded_user(devnet)
    result = _bridge(
        service,
        devnet,
        user,
        {"originCurrency": NATIVE, "destinationCurrency": NATIVE, "amount": str(10**17)},
    )
    _assert_filled(service, devnet, *result)


def test_usdc_bridge_with_approval_arrives_in_full(service, devnet) -> None:
    user = _funded_user(devnet, usdc=50_000_000)
    usdc_in, usdc_out = _usdc(devnet, ORIGIN).lower(), _usdc(devnet, DESTINATION).lower()
    result = _bridge(
        service,
        devnet,
        user,
        {"originCurrency": usdc_in, "destinationCurrency": usdc_out, "amount": "20000000"},
    )
    quote = result[0]
    assert [step["id"] for step in quote["steps"]] == ["approve", "deposit"]
    _assert_filled(service, devnet, *result)
