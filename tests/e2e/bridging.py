"""Helpers for driving bridges through the HTTP API and the devnet chains, as a client would."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import httpx
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import Select, select
from web3 import Web3
from web3.types import BlockIdentifier

from crossfill.config import Deployment
from crossfill.contracts import calldata
from crossfill.devnet import accounts
from crossfill.devnet.anvil import set_native_balance
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.kinds.evm.config import evm_chain, evm_chains
from crossfill.store.tables import OutboxEvent, SentTransaction
from crossfill_client import QuoteRequest
from tests.conftest import RunningDevnet
from tests.e2e.wire import validate_against
from tests.support.database import rows_in
from tests.support.service import ServiceThread
from tests.support.waiting import wait_for
from tests.support.wallets.evm import send_item

NATIVE = "0x0000000000000000000000000000000000000000"
ORIGIN, DESTINATION = 900001, 900002
TERMINAL = frozenset({"success", "refund", "failure"})
# GET /requests/v2 is retired on 2026-11-24: tests of its records run on a clock before that.
V2_STILL_SERVED = datetime(2026, 11, 1, tzinfo=UTC)
REFUNDED = frozenset({"refund"})
OPERATOR_TOKEN = "operator-token"
OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


def native_bridge(user: str, **fields: Any) -> dict[str, Any]:
    """The quote body most tests start from: 0.1 ETH from ORIGIN to DESTINATION, exact input."""
    return {
        "user": user,
        "originChainId": ORIGIN,
        "destinationChainId": DESTINATION,
        "originCurrency": NATIVE,
        "destinationCurrency": NATIVE,
        "amount": str(10**17),
        "tradeType": "EXACT_INPUT",
        **fields,
    }


def bridge_request(
    user: str,
    currencies: tuple[str, str] = (NATIVE, NATIVE),
    amount: int = 10**17,
    **fields: Any,
) -> QuoteRequest:
    """What a user quotes with the Python client from ORIGIN to DESTINATION: `amount` of
    `currencies[0]` for `currencies[1]` (0.1 ETH for ETH unless told), exact input unless
    `fields` say otherwise (by name or wire name)."""
    return QuoteRequest(
        user=user,
        origin_chain_id=ORIGIN,
        destination_chain_id=DESTINATION,
        origin_currency=currencies[0],
        destination_currency=currencies[1],
        amount=amount,
        **fields,
    )


def with_balance_wait(deployment: Deployment, seconds: float) -> Deployment:
    """`deployment` with fills the solver's balance cannot pay refunded after `seconds` (the
    default is minutes)."""
    chains = tuple(
        chain.model_copy(update={"solver_balance_wait_seconds": seconds})
        for chain in evm_chains(deployment)
    )
    return deployment.model_copy(update={"chains": chains})


def with_inventory_wait(deployment: Deployment, seconds: float) -> Deployment:
    """`deployment` with fills the solver's inventory cannot cover refunded after `seconds`
    (the default is minutes)."""
    chains = tuple(
        chain.model_copy(update={"inventory_wait_seconds": seconds})
        for chain in evm_chains(deployment)
    )
    return deployment.model_copy(update={"chains": chains})


def rpc_urls(devnet: RunningDevnet) -> dict[int, str]:
    return {chain.id: chain.rpc_url for chain in evm_chains(devnet.deployment)}


def usdc(devnet: RunningDevnet, chain_id: int) -> str:
    chain = evm_chain(devnet.deployment, chain_id)
    assert chain is not None
    return next(c.address for c in chain.erc20_currencies if c.symbol == "USDC")


def funded_user(devnet: RunningDevnet, usdc_amount: int = 0) -> LocalAccount:
    user: LocalAccount = Account.create()
    origin = evm_chains(devnet.deployment)[0]
    set_native_balance(origin.rpc_url, user.address, 10 * 10**18)
    if usdc_amount:
        minter = signing_web3(origin.rpc_url, accounts.deployer())
        token = contract_at(minter, "TestUSDC", usdc(devnet, ORIGIN))
        send(minter, token.functions.mint(user.address, usdc_amount))
    return user


def deposit_usdc(
    devnet: RunningDevnet, user: LocalAccount, quote: dict[str, Any], amount: int
) -> None:
    """Approve and deposit `amount` USDC on ORIGIN for the quote's order, whatever the quote
    asked for (a wrong-currency deposit when it quoted another currency)."""
    origin = evm_chains(devnet.deployment)[0]
    token = usdc(devnet, ORIGIN)
    holder = signing_web3(origin.rpc_url, user)
    send(
        holder,
        contract_at(holder, "TestUSDC", token).functions.approve(
            origin.contracts.depository, amount
        ),
    )
    order_id = bytes.fromhex(quote["protocol"]["v2"]["orderId"][2:])
    deposit = calldata.deposit_erc20(user.address, token, amount, order_id)
    item = {"to": origin.contracts.depository, "data": calldata.hex_data(deposit), "value": "0"}
    send_item(holder, user, {**item, "chainId": ORIGIN})


def deposit_native(
    devnet: RunningDevnet, user: LocalAccount, quote: dict[str, Any], amount: int
) -> str:
    """Deposit `amount` wei on ORIGIN for the quote's order, whatever the quote asked for."""
    origin = evm_chains(devnet.deployment)[0]
    order_id = bytes.fromhex(quote["protocol"]["v2"]["orderId"][2:])
    deposit = calldata.deposit_native(user.address, order_id)
    item = {
        "to": origin.contracts.depository,
        "data": calldata.hex_data(deposit),
        "value": str(amount),
        "chainId": ORIGIN,
    }
    return send_item(signing_web3(origin.rpc_url, user), user, item)


def new_api_key(http: httpx.Client, name: str) -> str:
    """A new API key, made over the admin API (the service runs with OPERATOR's token)."""
    created = http.post("/admin/api-keys", json={"name": name}, headers=OPERATOR)
    assert created.status_code == 201, created.text
    key: str = created.json()["key"]
    return key


def listed_v3(http: httpx.Client, key: str, **params: Any) -> dict[str, Any]:
    """GET /requests/v3 with `key`; the answer checked against its wire schema."""
    response = http.get("/requests/v3", params=params, headers={"x-api-key": key})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    validate_against("requests-v3", body)
    return body


def balance(
    devnet: RunningDevnet,
    chain_id: int,
    currency: str,
    holder: str,
    block: BlockIdentifier = "latest",
) -> int:
    """`holder`'s balance of `currency` on the chain, at `block` (the latest by default)."""
    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[chain_id]))
    if currency == NATIVE:
        return web3.eth.get_balance(Web3.to_checksum_address(holder), block_identifier=block)
    return int(
        contract_at(web3, "TestUSDC", currency)
        .functions.balanceOf(Web3.to_checksum_address(holder))
        .call(block_identifier=block)
    )


def request_quote(http: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    responses: list[httpx.Response] = []

    def quoted() -> bool:
        responses.append(http.post("/quote/v2", json=body))
        return responses[-1].status_code != 503

    assert wait_for(quoted, timeout=10)
    assert responses[-1].status_code == 200, responses[-1].text
    quote: dict[str, Any] = responses[-1].json()
    return quote


def final_status(
    http: httpx.Client,
    request_id: str,
    timeout: float = 40,
    until: frozenset[str] = TERMINAL,
) -> dict[str, Any]:
    seen: list[dict[str, Any]] = []

    def finished() -> bool:
        seen.append(http.get("/intents/status/v3", params={"requestId": request_id}).json())
        return seen[-1]["status"] in until

    assert wait_for(finished, timeout=timeout, interval=0.2), seen[-1]
    validate_against("status", seen[-1])
    return seen[-1]


def stored_rows(service: ServiceThread, statement: Select[Any]) -> list[Any]:
    """Run one ORM select against the service's database (what the service has recorded)."""
    return rows_in(service.settings.database, statement)


def quote_request_id(quote: dict[str, Any]) -> str:
    """The request id a quote's first step carries."""
    request_id: str = quote["steps"][0]["requestId"]
    return request_id


def fills_journalled(database_url: str, request_id: str) -> list[Any]:
    """The fill transactions the service journalled for `request_id` (`sent_transactions`)."""
    return rows_in(
        database_url,
        select(SentTransaction).where(
            SentTransaction.request_id == request_id, SentTransaction.purpose == "fill"
        ),
    )


def published_statuses(service: ServiceThread, request_id: str) -> list[str]:
    events = stored_rows(
        service,
        select(OutboxEvent).where(OutboxEvent.request_id == request_id).order_by(OutboxEvent.id),
    )
    return [event.payload["status"] for event in events]


def journal(service: ServiceThread, request_id: str) -> list[SentTransaction]:
    """The transaction manager's journal for one request, oldest first."""
    return stored_rows(
        service,
        select(SentTransaction)
        .where(SentTransaction.request_id == request_id)
        .order_by(SentTransaction.id),
    )


@contextmanager
def pool_price_moved(devnet: RunningDevnet, chain_id: int, ether: int) -> Iterator[None]:
    """A large ETH→USDC trade on the chain's pool, undone afterwards."""
    chain = evm_chain(devnet.deployment, chain_id)
    assert chain is not None and chain.contracts.uniswap_v2_router is not None
    whale = accounts.deployer()
    web3 = signing_web3(chain.rpc_url, whale)
    router = contract_at(web3, "UniswapV2Router02", chain.contracts.uniswap_v2_router)
    token = contract_at(web3, "TestUSDC", usdc(devnet, chain_id))
    deadline = web3.eth.get_block("latest")["timestamp"] + 3600
    path = [chain.contracts.weth, token.address]
    before = token.functions.balanceOf(whale.address).call()
    send(
        web3,
        router.functions.swapExactETHForTokens(0, path, whale.address, deadline),
        value=ether,
    )
    bought = token.functions.balanceOf(whale.address).call() - before
    try:
        yield
    finally:
        send(web3, token.functions.approve(router.address, bought))
        send(
            web3,
            router.functions.swapExactTokensForETH(bought, 0, path[::-1], whale.address, deadline),
        )
