"""Helpers for gasless execution on the devnet: a delegated batch signed by a user holding no
ether, as a client builds it with eth-account (EIP-7702 authorization, EIP-712 batch)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3

from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at, deploy, send, signing_web3
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, OPERATOR, ORIGIN, request_quote, usdc

BATCH_TYPES = {
    "Call": [
        {"name": "to", "type": "address"},
        {"name": "value", "type": "uint256"},
        {"name": "data", "type": "bytes"},
    ],
    "Batch": [{"name": "calls", "type": "Call[]"}, {"name": "nonce", "type": "uint256"}],
}


def origin_web3(devnet: RunningDevnet) -> Web3:
    return Web3(Web3.HTTPProvider(evm_chains(devnet.deployment)[0].rpc_url))


def deploy_delegate(devnet: RunningDevnet) -> str:
    """A BatchDelegate on ORIGIN, for users to point their code at."""
    web3 = signing_web3(evm_chains(devnet.deployment)[0].rpc_url, accounts.deployer())
    return str(deploy(web3, "BatchDelegate"))


def user_with_usdc(devnet: RunningDevnet, amount: int) -> LocalAccount:
    """A new account holding `amount` USDC on ORIGIN and no ether at all."""
    user: LocalAccount = Account.create()
    minter = signing_web3(evm_chains(devnet.deployment)[0].rpc_url, accounts.deployer())
    send(
        minter,
        contract_at(minter, "TestUSDC", usdc(devnet, ORIGIN)).functions.mint(user.address, amount),
    )
    return user


def sponsored_key(http: httpx.Client, devnet: RunningDevnet) -> tuple[str, int]:
    """A new API key whose sponsor wallet is the devnet's gas sponsor; (key, key id)."""
    created = http.post("/admin/api-keys", json={"name": "gasless"}, headers=OPERATOR)
    assert created.status_code == 201, created.text
    key, key_id = created.json()["key"], created.json()["id"]
    sponsor = http.put(
        f"/admin/api-keys/{key_id}/sponsor",
        json={
            "wallet": accounts.gas_sponsor().address,
            "chainId": ORIGIN,
            "currency": usdc(devnet, ORIGIN),
        },
        headers=OPERATOR,
    )
    assert sponsor.status_code == 200, sponsor.text
    return key, key_id


def usdc_bridge_quote(
    http: httpx.Client, devnet: RunningDevnet, user: str, recipient: str, amount: int, key: str
) -> dict[str, Any]:
    body = {
        "user": user,
        "recipient": recipient,
        "originChainId": ORIGIN,
        "destinationChainId": DESTINATION,
        "originCurrency": usdc(devnet, ORIGIN),
        "destinationCurrency": usdc(devnet, DESTINATION),
        "amount": str(amount),
        "tradeType": "EXACT_INPUT",
    }
    http.headers["x-api-key"] = key
    try:
        return request_quote(http, body)
    finally:
        del http.headers["x-api-key"]


def token_call(devnet: RunningDevnet, function: str, *args: Any) -> dict[str, Any]:
    """A batch call of ORIGIN's USDC (`transfer`, `approve`, `transferFrom`, ...)."""
    web3 = origin_web3(devnet)
    token = contract_at(web3, "TestUSDC", usdc(devnet, ORIGIN))
    return {
        "to": token.address,
        "value": 0,
        "data": bytes.fromhex(token.encode_abi(function, list(args))[2:]),
    }


def quote_calls(quote: dict[str, Any]) -> list[dict[str, Any]]:
    """Every transaction item of the quote, as batch calls."""
    return [
        {
            "to": Web3.to_checksum_address(item["data"]["to"]),
            "value": int(item["data"]["value"]),
            "data": bytes.fromhex(item["data"]["data"][2:]),
        }
        for step in quote["steps"]
        for item in step["items"]
    ]


@dataclass(frozen=True)
class SignedBatch:
    call_data: str
    authorization: dict[str, Any]


def signed_batch(
    web3: Web3,
    user: LocalAccount,
    delegate: str,
    calls: list[dict[str, Any]],
    *,
    batch_nonce: int = 0,
    account_nonce: int | None = None,
    chain_id: int = ORIGIN,
) -> SignedBatch:
    """The user's batch signature and EIP-7702 authorization, both made with eth-account."""
    signed = user.sign_typed_data(
        {
            "name": "CrossfillBatchDelegate",
            "version": "1",
            "chainId": ORIGIN,
            "verifyingContract": user.address,
        },
        BATCH_TYPES,
        {"calls": calls, "nonce": batch_nonce},
    )
    nonce = web3.eth.get_transaction_count(user.address) if account_nonce is None else account_nonce
    # Typed as SignedMessage by eth-account's LocalAccount, it is a SignedSetCodeAuthorization.
    authorization: Any = user.sign_authorization(
        {"chainId": chain_id, "address": delegate, "nonce": nonce}
    )
    executor = contract_at(web3, "BatchDelegate", user.address)
    call_data = executor.encode_abi(
        "execute",
        [[(c["to"], c["value"], c["data"]) for c in calls], batch_nonce, bytes(signed.signature)],
    )
    return SignedBatch(
        call_data=call_data,
        authorization={
            "chainId": authorization.chain_id,
            "address": delegate,
            "nonce": authorization.nonce,
            "yParity": authorization.y_parity,
            "r": hex(authorization.r),
            "s": hex(authorization.s),
        },
    )


def execute_body(
    user: str, batch: SignedBatch, request_id: str | None, *, subsidize: bool = False
) -> dict[str, Any]:
    """The /execute body of the user's batch; a raw call (no `requestId`) when it is None."""
    body: dict[str, Any] = {
        "executionKind": "rawCalls",
        "data": {
            "chainId": ORIGIN,
            "to": user,
            "data": batch.call_data,
            "value": "0",
            "authorizationList": [batch.authorization],
        },
        "executionOptions": {"referrer": "gasless-test", "subsidizeFees": subsidize},
    }
    if request_id is not None:
        body["requestId"] = request_id
    return body
