"""The orders of a burst: native bridges of $30 (one confirmation) by fresh users, each funded
on the origin, quoted through the API with a fresh recipient, its deposit signed and not sent
(`bench.origin_blocks` sends them all in one block)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import aiohttp
from eth_account import Account
from eth_account.signers.local import LocalAccount

from bench.chain_watch import rpc, rpc_batch
from bench.devnet_chains import BridgeChains
from tests.support.wallets.evm import GWEI, Fees, sign_item

NATIVE = "0x0000000000000000000000000000000000000000"
DEPOSIT = 10**16  # $30 at the devnet's price: one confirmation
FUNDS = 10**18  # what each user holds before it deposits
FEES = Fees(100 * GWEI, GWEI)
QUOTES_IN_FLIGHT = 8


@dataclass(frozen=True)
class Order:
    user: str
    recipient: str
    request_id: str
    order_id: str  # 0x-prefixed, lowercase
    output: int  # what its recipient is owed on the destination (the order's minimum)
    deposit: str  # the signed deposit transaction, raw
    deposit_hash: str


async def quoted_orders(
    http: aiohttp.ClientSession, api_url: str, chains: BridgeChains, count: int
) -> list[Order]:
    users: list[LocalAccount] = [Account.create() for _ in range(count)]
    origin = chains.origin
    await rpc_batch(
        http, origin.http_url, "anvil_setBalance", [[user.address, hex(FUNDS)] for user in users]
    )
    in_flight = asyncio.Semaphore(QUOTES_IN_FLIGHT)

    async def quote(user: LocalAccount) -> dict[str, Any]:
        body = {
            "user": user.address,
            "recipient": Account.create().address,
            "originChainId": origin.id,
            "destinationChainId": chains.destination.id,
            "originCurrency": NATIVE,
            "destinationCurrency": NATIVE,
            "amount": str(DEPOSIT),
            "tradeType": "EXACT_INPUT",
        }
        async with in_flight, http.post(f"{api_url}/quote/v2", json=body) as reply:
            if reply.status != 200:
                raise SystemExit(f"quote refused ({reply.status}): {await reply.text()}")
            answer: dict[str, Any] = await reply.json()
            return answer

    quotes = await asyncio.gather(*(quote(user) for user in users))
    gas = await _deposit_gas(http, origin.http_url, users[0], quotes[0])
    return [_order(user, quote, gas) for user, quote in zip(users, quotes, strict=True)]


async def _deposit_gas(
    http: aiohttp.ClientSession, url: str, user: LocalAccount, quote: dict[str, Any]
) -> int:
    """A deposit's gas limit: the node's estimate and a fifth more (every deposit of the burst
    makes the same call); small, so that hundreds fit in one block."""
    item = quote["steps"][0]["items"][0]["data"]
    call = {"from": user.address, "to": item["to"], "data": item["data"], "value": hex(DEPOSIT)}
    return int(await rpc(http, url, "eth_estimateGas", [call]), 16) * 6 // 5


def _order(user: LocalAccount, quote: dict[str, Any], gas: int) -> Order:
    step = quote["steps"][0]
    payment = quote["protocol"]["v2"]["orderData"]["output"]["payments"][0]
    signed = sign_item(user, step["items"][0]["data"], nonce=0, fees=FEES, gas=gas)
    return Order(
        user=user.address,
        recipient=payment["recipient"],
        request_id=step["requestId"],
        order_id=quote["protocol"]["v2"]["orderId"].lower(),
        output=int(payment["minimumAmount"]),
        deposit=signed.raw_transaction.to_0x_hex(),
        deposit_hash=signed.hash.to_0x_hex(),
    )
