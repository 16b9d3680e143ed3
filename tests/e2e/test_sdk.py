"""The official TypeScript SDK, unchanged, executes quotes end to end against the service.

`execute_quote.mjs` uses `@relayprotocol/relay-sdk` with a viem private-key wallet and
`configureDynamicChains()` against our `/chains`; these tests check what arrived on chain.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from eth_account.signers.local import LocalAccount
from web3 import Web3

from crossfill.contracts.toolchain import node_modules_dir
from crossfill.devnet.anvil import set_native_balance
from crossfill.devnet.deploy import contract_at
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    balance,
    funded_user,
    published_statuses,
    rpc_urls,
    usdc,
)
from tests.support.service import ServiceThread, StartService

SCRIPT = Path(__file__).parent / "sdk" / "execute_quote.mjs"


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _execute_with_sdk(
    service: ServiceThread,
    user: LocalAccount,
    currencies: tuple[str, str],
    amount: int,
    **options: Any,
) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None, "node is required by the SDK test"
    assert (node_modules_dir() / "@relayprotocol" / "relay-sdk").is_dir()
    arguments = {
        "baseApiUrl": service.base_url,
        "privateKey": "0x" + bytes(user.key).hex(),
        "originChainId": ORIGIN,
        "destinationChainId": DESTINATION,
        "originCurrency": currencies[0],
        "destinationCurrency": currencies[1],
        "amount": str(amount),
        "tradeType": "EXACT_INPUT",
        "options": options,
    }
    run = subprocess.run(
        [node, str(SCRIPT), json.dumps(arguments)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    outcome: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return outcome


def _assert_executed(
    service: ServiceThread,
    devnet: RunningDevnet,
    outcome: dict[str, Any],
    received: int,
    *,
    last_check_seen: str | None = "success",
) -> None:
    assert {ORIGIN, DESTINATION} <= set(outcome["chainIds"])
    assert received == int(outcome["quotedOutput"])
    assert all(item["status"] == "complete" for step in outcome["steps"] for item in step["items"])
    if last_check_seen is not None:
        assert outcome["checkStatuses"][-1] == last_check_seen
    # Once the check says success, the SDK holds our status' txHashes (the fill) and keeps
    # the wallet's own deposit as internalTxHashes.
    item = outcome["steps"][-1]["items"][0]
    (fill,) = item["txHashes"]
    (deposit,) = item["internalTxHashes"]
    for sent, chain_id in ((deposit, ORIGIN), (fill, DESTINATION)):
        assert sent["chainId"] == chain_id
        chain = Web3(Web3.HTTPProvider(rpc_urls(devnet)[chain_id]))
        assert chain.eth.get_transaction_receipt(sent["txHash"])["status"] == 1
    assert published_statuses(service, outcome["requestId"]) == [
        "waiting",
        "pending",
        "submitted",
        "success",
    ]


def test_sdk_bridges_native_eth(service, devnet) -> None:
    user = funded_user(devnet)
    before = balance(devnet, DESTINATION, NATIVE, user.address)
    outcome = _execute_with_sdk(service, user, (NATIVE, NATIVE), 10**17)
    received = balance(devnet, DESTINATION, NATIVE, user.address) - before
    assert outcome["stepIds"] == ["deposit"]
    _assert_executed(service, devnet, outcome, received)


def test_sdk_bridges_usdc_with_approve_step(service, devnet) -> None:
    user = funded_user(devnet, usdc_amount=500 * 10**6)
    destination_usdc = usdc(devnet, DESTINATION)
    before = balance(devnet, DESTINATION, destination_usdc, user.address)
    outcome = _execute_with_sdk(
        service, user, (usdc(devnet, ORIGIN), destination_usdc), 250 * 10**6
    )
    received = balance(devnet, DESTINATION, destination_usdc, user.address) - before
    assert outcome["stepIds"] == ["approve", "deposit"]
    _assert_executed(service, devnet, outcome, received)


def test_sdk_runs_a_cross_chain_swap_eth_to_usdc(service, devnet) -> None:
    user = funded_user(devnet)
    destination_usdc = usdc(devnet, DESTINATION)
    before = balance(devnet, DESTINATION, destination_usdc, user.address)
    outcome = _execute_with_sdk(service, user, (NATIVE, destination_usdc), 10**17)
    received = balance(devnet, DESTINATION, destination_usdc, user.address) - before
    assert outcome["stepIds"] == ["deposit"]
    assert outcome["operation"] == "swap"
    _assert_executed(service, devnet, outcome, received)


def test_sdk_bridges_usdc_by_signature_without_a_transaction(service, devnet) -> None:
    """`usePermit`: the SDK signs the deposit authorization and posts it; the service sends
    the deposit. The user holds no ether on the origin and never sends a transaction."""
    user = funded_user(devnet, usdc_amount=500 * 10**6)
    origin = evm_chains(devnet.deployment)[0]
    set_native_balance(origin.rpc_url, user.address, 0)
    destination_usdc = usdc(devnet, DESTINATION)
    before = balance(devnet, DESTINATION, destination_usdc, user.address)
    outcome = _execute_with_sdk(
        service, user, (usdc(devnet, ORIGIN), destination_usdc), 250 * 10**6, usePermit=True
    )
    received = balance(devnet, DESTINATION, destination_usdc, user.address) - before
    assert outcome["stepIds"] == ["deposit"] and outcome["stepKinds"] == ["signature"]
    # A completed signature step is no longer the SDK's current item: its progress callback
    # never shows that item's `success` (the item itself is complete, with the fill's hash).
    _assert_executed(service, devnet, outcome, received, last_check_seen=None)
    web3 = Web3(Web3.HTTPProvider(origin.rpc_url))
    assert web3.eth.get_transaction_count(user.address) == 0
    token = contract_at(web3, "TestUSDC", usdc(devnet, ORIGIN))
    assert token.functions.allowance(user.address, origin.contracts.depository).call() == 0
    assert token.functions.balanceOf(user.address).call() == 250 * 10**6


def test_sdk_bridges_native_eth_through_a_deposit_address(service, devnet) -> None:
    """`useDepositAddress`: the SDK sends the step's plain transfer to the request's address,
    as for any transaction step, and polls the status until the fill."""
    user = funded_user(devnet)
    before = balance(devnet, DESTINATION, NATIVE, user.address)
    outcome = _execute_with_sdk(
        service,
        user,
        (NATIVE, NATIVE),
        10**17,
        useDepositAddress=True,
        strict=True,
        refundTo=user.address,
    )
    received = balance(devnet, DESTINATION, NATIVE, user.address) - before
    assert outcome["stepIds"] == ["deposit"]
    assert received == int(outcome["quotedOutput"])
    assert all(item["status"] == "complete" for step in outcome["steps"] for item in step["items"])
    assert outcome["checkStatuses"][-1] == "success"
    (transfer,) = outcome["steps"][-1]["items"][0]["internalTxHashes"]
    origin = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    sent = origin.eth.get_transaction(transfer["txHash"])
    assert sent["input"] in (b"", "0x") and sent["value"] == 10**17  # a plain transfer
    assert balance(devnet, ORIGIN, NATIVE, sent["to"]) == 0  # swept into the Depository
    statuses = published_statuses(service, outcome["requestId"])
    assert statuses[-3:] == ["pending", "submitted", "success"]
    assert set(statuses[:-3]) == {"waiting"}
