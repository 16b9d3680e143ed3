"""What the client's end-to-end tests do on the devnet besides using the client: fund users,
read balances on each kind of chain, make an API key. (The client itself is only ever given
a base URL, RPC URLs and keys.)"""

from __future__ import annotations

from decimal import Decimal

import httpx
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3

from crossfill.devnet import accounts
from crossfill.devnet.anvil import set_native_balance
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.kinds.evm.config import evm_chain
from crossfill_client import QuoteRequest
from tests.support.devnets import RunningDevnet
from tests.support.wallets.svm import rpc

ORIGIN, DESTINATION = 900001, 900002
SVM_CHAIN = 792703809
PERPS_CHAIN = 1337
NATIVE = "0x" + "00" * 20
SOL = "1" * 32
PERPS_USDC = "0x" + "0" * 32
OPERATOR_TOKEN = "client-tests-operator"


def bridge(
    user: str,
    route: tuple[int, int],
    currencies: tuple[str, str],
    amount: int,
    *,
    recipient: str | None = None,
    **options: object,
) -> QuoteRequest:
    """A quote of `amount` from `route[0]` to `route[1]`, `currencies[0]` to `currencies[1]`."""
    (origin, destination), (currency_in, currency_out) = route, currencies
    return QuoteRequest.model_validate(
        {
            "user": user,
            "recipient": recipient,
            "origin_chain_id": origin,
            "destination_chain_id": destination,
            "origin_currency": currency_in,
            "destination_currency": currency_out,
            "amount": amount,
            **options,
        }
    )


def usdc(devnet: RunningDevnet, chain_id: int) -> str:
    chain = evm_chain(devnet.deployment, chain_id)
    assert chain is not None
    return next(c.address for c in chain.erc20_currencies if c.symbol == "USDC")


def rpc_url(devnet: RunningDevnet, chain_id: int) -> str:
    chain = evm_chain(devnet.deployment, chain_id)
    assert chain is not None
    return chain.rpc_url


def funded_user(devnet: RunningDevnet, *, ether: int = 10, usdc_units: int = 0) -> LocalAccount:
    """A new account holding `ether` ETH and `usdc_units` USDC on ORIGIN."""
    user: LocalAccount = Account.create()
    set_native_balance(rpc_url(devnet, ORIGIN), user.address, ether * 10**18)
    if usdc_units:
        minter = signing_web3(rpc_url(devnet, ORIGIN), accounts.deployer())
        token = contract_at(minter, "TestUSDC", usdc(devnet, ORIGIN))
        send(minter, token.functions.mint(user.address, usdc_units))
    return user


def evm_balance(devnet: RunningDevnet, chain_id: int, currency: str, holder: str) -> int:
    web3 = Web3(Web3.HTTPProvider(rpc_url(devnet, chain_id)))
    owner = Web3.to_checksum_address(holder)
    if currency == NATIVE:
        return web3.eth.get_balance(owner)
    return int(contract_at(web3, "TestUSDC", currency).functions.balanceOf(owner).call())


def sol_balance(node_url: str, owner: str) -> int:
    return int(rpc(node_url, "getBalance", owner)["value"])


def withdrawable(exchange_url: str, user: str) -> Decimal:
    """The account's perps USDC on the exchange (`clearinghouseState`)."""
    answer = httpx.post(
        f"{exchange_url}/info", json={"type": "clearinghouseState", "user": user}, timeout=10
    )
    assert answer.status_code == 200, answer.text
    return Decimal(answer.json()["withdrawable"])


def new_api_key(base_url: str, name: str) -> str:
    created = httpx.post(
        f"{base_url}/admin/api-keys",
        json={"name": name},
        headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"},
        timeout=10,
    )
    assert created.status_code == 201, created.text
    key: str = created.json()["key"]
    return key
