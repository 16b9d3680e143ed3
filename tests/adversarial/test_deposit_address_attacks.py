"""Deposit addresses under attack, on the devnet with the real service: a transaction that
reverted pays nothing, however it carried value to the address, and transfers too small to
pay their own sweep are shown and left, never swept one by one, nor let decide the fate of a
real payment made after them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_typing import HexStr
from sqlalchemy import select
from web3 import Web3

from crossfill.devnet.deploy import contract_at
from crossfill.kinds.evm.config import evm_chains
from crossfill.store.tables import AddressTransfer
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    OPERATOR_TOKEN,
    ORIGIN,
    balance,
    final_status,
    funded_user,
    listed_v3,
    new_api_key,
    request_quote,
    rpc_urls,
    stored_rows,
)
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for
from tests.support.wallets.evm import broadcast_item, send_item

ETH = 10**18
QUOTED = ETH // 100
DUST_TRANSFERS = 12


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    """The service with its workers (the sweeper among them) on the devnet."""
    return start_service(run_workers=True, settings={"admin_token": OPERATOR_TOKEN})


@dataclass(frozen=True)
class _Quoted:
    """A strict deposit address quoted for `QUOTED` wei of ether under an API key of its own,
    refunds to a fresh address."""

    key: str
    quote: dict[str, Any]
    address: str  # lower case
    request_id: str


def _quoted(client: httpx.Client, key_name: str, user: LocalAccount, recipient: str) -> _Quoted:
    key = new_api_key(client, key_name)
    client.headers["x-api-key"] = key
    quote = request_quote(
        client,
        {
            "user": user.address,
            "recipient": recipient,
            "refundTo": Account.create().address,
            "originChainId": ORIGIN,
            "destinationChainId": DESTINATION,
            "originCurrency": NATIVE,
            "destinationCurrency": NATIVE,
            "amount": str(QUOTED),
            "tradeType": "EXACT_INPUT",
            "useDepositAddress": True,
        },
    )
    (step,) = quote["steps"]
    return _Quoted(key, quote, step["depositAddress"].lower(), step["requestId"])


def _origin(devnet: RunningDevnet) -> Web3:
    return Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))


def _transfer(address: str, value: int, **fields: Any) -> dict[str, Any]:
    return {"to": address, "data": "0x", "value": str(value), "chainId": ORIGIN, **fields}


def _sweeps_of(devnet: RunningDevnet, address: str) -> list[Any]:
    """The factory's `Swept` events for `address`: the sweeps the chain has mined."""
    factory = evm_chains(devnet.deployment)[0].contracts.deposit_address_factory
    assert factory is not None
    events = contract_at(_origin(devnet), "DepositAddressFactory", factory).events.Swept
    swept = events().get_logs(from_block=0)
    return [event for event in swept if event["args"]["depositAddress"].lower() == address]


def _listed_with_children(client: httpx.Client, key: str, address: str) -> list[dict[str, Any]]:
    return list(
        listed_v3(client, key, depositAddress=address, includeChildRequests="true")["requests"]
    )


def test_a_reverted_transfer_beside_a_real_payment_pays_nothing(
    devnet: RunningDevnet, service: ServiceThread, client: httpx.Client
) -> None:
    """The address is deployed by its first sweep; from then on a transaction to it can revert
    with its value in the block (calldata the clone does not take). The attacker's reverted
    0.004 ETH goes just before the victim's 0.01 ETH payment in one block: the victim is filled
    with the full 0.01 ETH, the reverted transaction makes no request and sweeps nothing."""
    user, recipient = funded_user(devnet), Account.create().address
    quoted = _quoted(client, "reverted-transfer", user, recipient)
    key, address, parent = quoted.key, quoted.address, quoted.request_id
    send_item(_origin(devnet), user, _transfer(address, QUOTED))
    assert final_status(client, parent, timeout=60)["status"] == "success"
    web3 = _origin(devnet)
    assert web3.eth.get_code(Web3.to_checksum_address(address)) != b""  # deployed by the sweep
    filled_once = balance(devnet, DESTINATION, NATIVE, recipient)

    attacker, victim = funded_user(devnet), funded_user(devnet)
    web3.provider.make_request("evm_setAutomine", [False])  # type: ignore[arg-type]
    try:
        reverted = broadcast_item(
            web3, attacker, _transfer(address, 4 * ETH // 1000, data="0xdeadbeef", gas=100_000)
        )
        paid = broadcast_item(web3, victim, _transfer(address, QUOTED, gas=100_000))
        web3.provider.make_request("evm_mine", [])  # type: ignore[arg-type]
    finally:
        web3.provider.make_request("evm_setAutomine", [True])  # type: ignore[arg-type]
    undone = web3.eth.wait_for_transaction_receipt(HexStr(reverted), timeout=30)
    good = web3.eth.wait_for_transaction_receipt(HexStr(paid), timeout=30)
    assert undone["status"] == 0 and good["status"] == 1
    assert undone["blockNumber"] == good["blockNumber"]
    assert undone["transactionIndex"] < good["transactionIndex"]

    listed: list[dict[str, Any]] = []

    def victim_listed() -> bool:
        listed[:] = _listed_with_children(client, key, address)
        return any(r["depositAddress"]["depositTxHash"] == paid for r in listed)

    assert wait_for(victim_listed, timeout=30)
    assert [r for r in listed if r["depositAddress"]["depositTxHash"] == reverted] == []
    seen = stored_rows(service, select(AddressTransfer).where(AddressTransfer.address == address))
    assert reverted not in {row.tx_hash for row in seen}
    (child,) = [r for r in listed if r["depositAddress"]["depositTxHash"] == paid]
    assert child["depositAddress"]["depositor"] == victim.address.lower()
    assert final_status(client, child["id"], timeout=60)["status"] == "success"
    assert balance(devnet, DESTINATION, NATIVE, recipient) == 2 * filled_once
    assert balance(devnet, ORIGIN, NATIVE, address) == 0
    assert [int(event["args"]["amount"]) for event in _sweeps_of(devnet, address)] == [
        QUOTED,
        QUOTED,
    ]


def test_dust_is_shown_and_left_and_a_real_payment_after_it_fills(
    devnet: RunningDevnet, service: ServiceThread, client: httpx.Client
) -> None:
    """Twelve one-wei transfers to an address: no sweep (each would cost the solver far more
    gas than it moves), each shown as a failed child too small to refund, counted in a
    metric; the quoted request is still the one the victim's real payment, made after them,
    fills in full."""
    victim, recipient = funded_user(devnet), Account.create().address
    quoted = _quoted(client, "dust-transfers", victim, recipient)
    key, address, parent = quoted.key, quoted.address, quoted.request_id
    attacker = funded_user(devnet)
    web3 = _origin(devnet)
    dust = [send_item(web3, attacker, _transfer(address, 1)) for _ in range(DUST_TRANSFERS)]

    def judged() -> bool:
        rows = stored_rows(
            service, select(AddressTransfer).where(AddressTransfer.address == address)
        )
        return len(rows) == DUST_TRANSFERS and all(row.state != "seen" for row in rows)

    assert wait_for(judged, timeout=60)
    assert _sweeps_of(devnet, address) == []
    children = [r for r in _listed_with_children(client, key, address) if r["id"] != parent]
    assert sorted(r["depositAddress"]["depositTxHash"] for r in children) == sorted(dust)
    for child in children:
        assert child["status"] == "failure"
        assert child["data"]["failReason"] == "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL"
        assert child["data"]["refundFailReason"] == "AMOUNT_TOO_LOW_TO_REFUND"
    scraped = httpx.get(f"{service.base_url}/metrics", timeout=10).text
    assert f'crossfill_deposit_address_dust_total{{chain_id="{ORIGIN}"}} {DUST_TRANSFERS}.0' in (
        scraped
    )

    paid = send_item(web3, victim, _transfer(address, QUOTED))
    status = final_status(client, parent, timeout=60)
    assert status["status"] == "success", status
    (record,) = listed_v3(client, key, id=parent)["requests"]
    assert record["depositAddress"]["depositTxHash"] == paid
    assert record["depositAddress"]["depositor"] == victim.address.lower()
    assert balance(devnet, DESTINATION, NATIVE, recipient) == int(
        quoted.quote["details"]["currencyOut"]["amount"]
    )
    assert [int(event["args"]["amount"]) for event in _sweeps_of(devnet, address)] == [QUOTED]
    assert balance(devnet, ORIGIN, NATIVE, address) == DUST_TRANSFERS  # left for recovery
