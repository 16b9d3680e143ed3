"""kill -9 the service while 50+ bridges are in flight, restart it, and count on chain:
every deposit ends in exactly one fill or one refund, and no status ever moved backwards."""

from __future__ import annotations

import itertools
import random
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import select
from web3 import Web3

from crossfill.contracts import calldata
from crossfill.devnet.anvil import set_native_balance
from crossfill.devnet.deploy import contract_at
from crossfill.domain.status import RequestStatus, can_move
from crossfill.kinds.evm.config import evm_chains
from crossfill.store.tables import OutboxEvent
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, NATIVE, ORIGIN, rpc_urls
from tests.support.database import rows_in
from tests.support.service import ServiceProcess, service_settings
from tests.support.waiting import wait_for
from tests.support.wallets.evm import sign_item, wallet_fees

ETH = 10**18
REQUESTS = 54
UNDERPAID_EVERY = 6  # every sixth deposit pays too little and must be refunded
KILLS = 4


@pytest.fixture
def service_process(devnet: RunningDevnet, tmp_path: Path):
    service = ServiceProcess(service_settings(tmp_path, devnet.deployment_path))
    service.start()
    yield service
    service.stop()


def _quote(http: httpx.Client, user: LocalAccount, refund_to: str) -> dict[str, Any]:
    body = {
        "user": user.address,
        "recipient": Account.create().address,
        "refundTo": refund_to,  # one per request: refunds can be counted on chain
        "originChainId": ORIGIN,
        "destinationChainId": DESTINATION,
        "originCurrency": NATIVE,
        "destinationCurrency": NATIVE,
        "amount": str(ETH // 100),
        "tradeType": "EXACT_INPUT",
    }
    for _ in range(50):
        response = http.post("/quote/v2", json=body)
        if response.status_code == 200:
            quote: dict[str, Any] = response.json()
            return quote
        time.sleep(0.2)
    raise AssertionError(response.text)


def _send_deposits(
    devnet: RunningDevnet, quotes: list[dict[str, Any]], users: list[LocalAccount]
) -> None:
    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    depository = evm_chains(devnet.deployment)[0].contracts.depository
    nonces = {user.address: int(web3.eth.get_transaction_count(user.address)) for user in users}
    fees = wallet_fees(web3)
    for index, (quote, user) in enumerate(zip(quotes, itertools.cycle(users), strict=False)):
        amount = int(quote["details"]["currencyIn"]["amount"])
        if index % UNDERPAID_EVERY == 0:
            amount //= 2
        order_id = bytes.fromhex(quote["protocol"]["v2"]["orderId"][2:])
        deposit = {
            "to": depository,
            "data": calldata.deposit_native(user.address, order_id),
            "value": amount,
            "chainId": ORIGIN,
        }
        signed = sign_item(user, deposit, nonce=nonces[user.address], fees=fees, gas=100_000)
        nonces[user.address] += 1
        web3.eth.send_raw_transaction(signed.raw_transaction)


def _call_target(call: Any) -> str:
    """`to` of a decoded Depository Call struct (a mapping or a tuple, by web3 version)."""
    return str(call["to"] if isinstance(call, Mapping) else call[0])


def _statuses(http: httpx.Client, request_ids: list[str]) -> dict[str, str]:
    return {
        rid: http.get("/intents/status/v3", params={"requestId": rid}).json()["status"]
        for rid in request_ids
    }


def _published(database: str) -> dict[str, list[str]]:
    events: dict[str, list[str]] = {}
    for row in rows_in(database, select(OutboxEvent).order_by(OutboxEvent.id)):
        events.setdefault(row.request_id, []).append(row.payload["status"])
    return events


def test_kill_9_mid_flight_loses_nothing_and_fills_nothing_twice(service_process, devnet) -> None:
    rng = random.Random(1234)
    users = [Account.create() for _ in range(6)]
    for user in users:
        set_native_balance(rpc_urls(devnet)[ORIGIN], user.address, 10 * ETH)
    refund_addresses = [Account.create().address for _ in range(REQUESTS)]
    with httpx.Client(base_url=service_process.base_url, timeout=10) as http:
        quotes = [_quote(http, users[i % len(users)], refund_addresses[i]) for i in range(REQUESTS)]
    _send_deposits(devnet, quotes, users)

    for _ in range(KILLS):
        time.sleep(rng.uniform(0.3, 1.5))
        service_process.kill()
        service_process.start()

    request_ids = [quote["steps"][0]["requestId"] for quote in quotes]
    with httpx.Client(base_url=service_process.base_url, timeout=10) as http:
        done = wait_for(
            lambda: set(_statuses(http, request_ids).values()) <= {"success", "refund"},
            timeout=120,
            interval=1,
        )
        final = _statuses(http, request_ids)
    assert done, Counter(final.values())

    destination = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION]))
    filler = contract_at(destination, "Filler", evm_chains(devnet.deployment)[1].contracts.filler)
    origin = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    depository = contract_at(
        origin, "Depository", evm_chains(devnet.deployment)[0].contracts.depository
    )
    executed = depository.events.CallExecuted().get_logs(from_block=0)
    refunds_to = Counter(
        Web3.to_checksum_address(_call_target(event.args["call"])) for event in executed
    )
    fills = Counter(
        "0x" + event.args["orderId"].hex()
        for event in filler.events.OrderFilled().get_logs(from_block=0)
    )
    for index, quote in enumerate(quotes):
        expected = "refund" if index % UNDERPAID_EVERY == 0 else "success"
        assert final[quote["steps"][0]["requestId"]] == expected, index
        assert fills[quote["protocol"]["v2"]["orderId"]] == (expected == "success"), index
        assert refunds_to[refund_addresses[index]] == (expected == "refund"), index

    for events in _published(service_process.database).values():
        for current, following in itertools.pairwise(events):
            assert current == following or can_move(
                RequestStatus(current), RequestStatus(following)
            ), events
