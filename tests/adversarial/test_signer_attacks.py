"""Attacks on the solver's key and balance with valid transactions: a nonce taken outside the
service, a fill the solver cannot pay gas for ahead of one it can, a destination call its
caller flips between the fill's simulation and its block."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_typing import HexStr
from web3 import Web3

from crossfill.contracts import calldata
from crossfill.devnet import accounts
from crossfill.devnet.anvil import anvil_rpc, set_native_balance
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    OPERATOR_TOKEN,
    ORIGIN,
    REFUNDED,
    balance,
    deposit_native,
    final_status,
    funded_user,
    journal,
    listed_v3,
    native_bridge,
    new_api_key,
    request_quote,
    rpc_urls,
    usdc,
    with_balance_wait,
    with_inventory_wait,
)
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for
from tests.support.wallets.evm import GWEI, Fees, broadcast_item, execute_steps, send_item

ETH = 10**18
# How long a fill the solver cannot pay waits for a top-up here (the deployment's default is
# minutes).
BALANCE_WAIT_SECONDS = 6.0


def _foreign_transaction(devnet: RunningDevnet, chain_id: int) -> None:
    """An operator moves funds by hand with the solver's key: one transaction the service did
    not make uses the key's next nonce."""
    solver = accounts.solver()
    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[chain_id]))
    item = {"to": Account.create().address, "data": "0x", "value": "1", "chainId": chain_id}
    send_item(web3, solver, item)


def _deposit_address_body(user: LocalAccount) -> dict[str, Any]:
    return native_bridge(
        user.address,
        recipient=Account.create().address,
        amount=str(ETH // 100),
        useDepositAddress=True,
    )


def _pay_deposit_address(http: httpx.Client, devnet: RunningDevnet) -> str:
    """A quote for a deposit address, paid by a plain transfer; its request id."""
    user = funded_user(devnet)
    (step,) = request_quote(http, _deposit_address_body(user))["steps"]
    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    send_item(web3, user, step["items"][0]["data"])
    request_id: str = step["requestId"]
    return request_id


def test_a_foreign_nonce_does_not_strand_the_next_sweep(
    devnet: RunningDevnet, start_service: StartService
) -> None:
    service = start_service(run_workers=True)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        # A first sweep: the service has counted the key's nonces on the origin chain.
        first = _pay_deposit_address(http, devnet)
        assert final_status(http, first, timeout=60)["status"] == "success"
        _foreign_transaction(devnet, ORIGIN)
        second = _pay_deposit_address(http, devnet)
        status = final_status(http, second, timeout=60)
    assert status["status"] == "success", status
    sweeps = [row for row in journal(service, second) if row.purpose == "sweep"]
    assert [row.status for row in sweeps][-1] == "mined"


def _underpaid_deposit(http: httpx.Client, devnet: RunningDevnet) -> str:
    """A deposit below its quote: its request fails and the deposit is refunded."""
    user = funded_user(devnet)
    quote = request_quote(http, native_bridge(user.address, amount=str(ETH // 100)))
    deposit_native(devnet, user, quote, int(quote["details"]["currencyIn"]["amount"]) // 2)
    request_id: str = quote["steps"][0]["requestId"]
    return request_id


def test_a_foreign_nonce_does_not_strand_the_next_refund(
    devnet: RunningDevnet, start_service: StartService
) -> None:
    service = start_service(run_workers=True)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        first = _underpaid_deposit(http, devnet)
        assert final_status(http, first, until=REFUNDED)["status"] == "refund"
        _foreign_transaction(devnet, ORIGIN)
        second = _underpaid_deposit(http, devnet)
        status = final_status(http, second, timeout=60, until=REFUNDED)
    assert status["status"] == "refund", status
    (refund_hash,) = status["txHashes"]
    origin = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    assert origin.eth.get_transaction_receipt(refund_hash)["status"] == 1
    refunds = [row for row in journal(service, second) if row.purpose.startswith("refund")]
    assert refunds[0].status == "conflicted" and refunds[-1].status == "mined"


@contextmanager
def _solver_balance(devnet: RunningDevnet, chain_id: int, wei: int) -> Iterator[None]:
    """The solver's gas-currency balance on `chain_id` set to `wei`, put back afterwards."""
    rpc_url = rpc_urls(devnet)[chain_id]
    solver = accounts.solver().address
    inventory = Web3(Web3.HTTPProvider(rpc_url)).eth.get_balance(solver)
    set_native_balance(rpc_url, solver, wei)
    try:
        yield
    finally:
        set_native_balance(rpc_url, solver, inventory)


def _shortfall_metric(http: httpx.Client) -> float:
    """`crossfill_solver_shortfall` of the destination's gas currency, 0 when absent."""
    for line in http.get("/metrics").text.splitlines():
        if line.startswith("crossfill_solver_shortfall{") and f'"{DESTINATION}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_an_unpayable_fill_does_not_hold_up_the_payable_one_behind_it(
    devnet: RunningDevnet, start_service: StartService
) -> None:
    deployment = with_inventory_wait(
        with_balance_wait(devnet.deployment, BALANCE_WAIT_SECONDS), BALANCE_WAIT_SECONDS
    )
    service = start_service(deployment, run_workers=True)
    large_user, small_user = funded_user(devnet), funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        large = request_quote(http, native_bridge(large_user.address, amount=str(5 * ETH)))
        small = request_quote(http, native_bridge(small_user.address, amount=str(ETH // 100)))
        large_out = int(large["details"]["currencyOut"]["amount"])
        # Enough for the large fill's output, not for its gas: 1 gwei over.
        with _solver_balance(devnet, DESTINATION, large_out + 10**9):
            time.sleep(1)  # the follower reads the new balance
            deposited_at = time.monotonic()
            execute_steps(large, large_user, rpc_urls(devnet))
            for _ in range(3):  # the confirmations a deposit of its value waits for
                anvil_rpc(rpc_urls(devnet)[ORIGIN], "evm_mine", [])
            large_id = large["steps"][0]["requestId"]
            # The large deposit accepted, and its fill tried, before the small one arrives.
            final_status(http, large_id, until=frozenset({"pending", "submitted", "failure"}))
            time.sleep(1)
            execute_steps(small, small_user, rpc_urls(devnet))
            small_status = final_status(http, small["steps"][0]["requestId"], timeout=15)
            assert small_status["status"] == "success", small_status
            ready = http.get("/readyz").json()
            shortfall = ready["checks"]["solverShortfall"][str(DESTINATION)]
            assert Decimal(shortfall["ETH"]) > 0, ready
            assert _shortfall_metric(http) > 0
            large_status = final_status(http, large_id, timeout=40, until=REFUNDED)
            waited = time.monotonic() - deposited_at
    assert large_status["status"] == "refund", large_status
    # Short of its gas at first; once the small fill is paid, short of its output too: over
    # the inventory, not a failed fill.
    assert large_status["failReason"] == "SOLVER_CAPACITY_EXCEEDED"
    assert waited >= BALANCE_WAIT_SECONDS
    assert not [row for row in journal(service, large_id) if row.purpose == "fill"]
    assert "solverShortfall" not in _ready_once_nothing_waits(service)["checks"]


def _ready_once_nothing_waits(service: ServiceThread) -> dict[str, Any]:
    """/readyz once no fill waits for the solver's balance any more."""
    answers: list[dict[str, Any]] = []

    def settled() -> bool:
        answers.append(httpx.get(f"{service.base_url}/readyz", timeout=10).json())
        return "solverShortfall" not in answers[-1]["checks"]

    wait_for(settled, timeout=10, interval=0.3)
    return answers[-1]


@pytest.fixture
def flipper(devnet: RunningDevnet) -> Iterator[LocalAccount]:
    """A caller holding destination USDC who lets the Router take 1 unit of it: a call
    `transferFrom(caller, caller, 1)` from the Router passes until the caller withdraws that
    allowance."""
    caller: LocalAccount = Account.create()
    rpc_url = rpc_urls(devnet)[DESTINATION]
    set_native_balance(rpc_url, caller.address, 10 * ETH)
    token = usdc(devnet, DESTINATION)
    minter = signing_web3(rpc_url, accounts.deployer())
    send(minter, contract_at(minter, "TestUSDC", token).functions.mint(caller.address, 10**6))
    own = signing_web3(rpc_url, caller)
    router = evm_chains(devnet.deployment)[1].contracts.router
    send(own, contract_at(own, "TestUSDC", token).functions.approve(router, 1))
    yield caller


@contextmanager
def _blocks_held(rpc_url: str) -> Iterator[None]:
    """No block is mined on the chain until the body ends (then one per transaction again)."""
    anvil_rpc(rpc_url, "evm_setAutomine", [False])
    try:
        yield
    finally:
        anvil_rpc(rpc_url, "evm_setAutomine", [True])
        anvil_rpc(rpc_url, "evm_mine", [])


def test_a_destination_call_flipped_before_the_fill_is_paid_by_the_refund(
    devnet: RunningDevnet, start_service: StartService, flipper: LocalAccount
) -> None:
    service = start_service(run_workers=True, settings={"admin_token": OPERATOR_TOKEN})
    user = funded_user(devnet)
    token = usdc(devnet, DESTINATION)
    take_one = calldata.erc20_transfer_from(flipper.address, flipper.address, 1)
    txs = [{"to": token, "data": calldata.hex_data(take_one), "value": "0"}]
    destination_rpc = rpc_urls(devnet)[DESTINATION]
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        key = new_api_key(http, "flipped-call")
        http.headers["x-api-key"] = key
        quote = request_quote(http, native_bridge(user.address, amount=str(ETH // 10), txs=txs))
        request_id = quote["steps"][0]["requestId"]
        with _blocks_held(destination_rpc):
            execute_steps(quote, user, rpc_urls(devnet))
            before = balance(devnet, ORIGIN, NATIVE, user.address)
            # The fill is simulated (the call passes), signed and sent: it waits for a block.
            assert wait_for(
                lambda: any(row.purpose == "fill" for row in journal(service, request_id)),
                timeout=20,
            )
            web3 = Web3(Web3.HTTPProvider(destination_rpc))
            revoke = contract_at(web3, "TestUSDC", token).encode_abi(
                "approve", args=[evm_chains(devnet.deployment)[1].contracts.router, 0]
            )
            # The caller's own transaction, tipped to go first in the block.
            flip = {"to": token, "data": revoke, "value": "0", "chainId": DESTINATION, "gas": 60000}
            _send_tipped(web3, flipper, flip)
        status = final_status(http, request_id, timeout=60, until=REFUNDED)
        (fill,) = [row for row in journal(service, request_id) if row.purpose == "fill"]
        (record,) = listed_v3(http, key, id=request_id)["requests"]
    assert status["status"] == "refund", status
    assert status["failReason"] == "TRANSACTION_REVERTED"
    fill_receipt = web3.eth.get_transaction_receipt(HexStr(fill.tx_hash))
    assert fill_receipt["status"] == 0
    fill_gas = int(fill_receipt["gasUsed"]) * int(fill_receipt["effectiveGasPrice"])
    (refund_hash,) = [tx_hash for tx_hash in status["txHashes"] if tx_hash != fill.tx_hash]
    origin = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    refund_receipt = origin.eth.get_transaction_receipt(refund_hash)
    refund_gas = int(refund_receipt["gasUsed"]) * int(refund_receipt["effectiveGasPrice"])
    deposited = int(quote["details"]["currencyIn"]["amount"])
    kept = deposited - (balance(devnet, ORIGIN, NATIVE, user.address) - before)
    # Both chains' gas is ether at one price on the devnet: the refund kept what the failed
    # fill and the refund itself cost, with the head-room of their pricing.
    assert fill_gas + refund_gas <= kept <= 3 * (fill_gas + refund_gas), (kept, fill_gas)
    # What the request's record says the service kept: nothing below what it spent.
    actual = record["data"]["fees"]["actual"]
    assert Decimal(actual["platform"]["usd"]) >= 0, actual


def _send_tipped(web3: Web3, account: LocalAccount, item: dict[str, Any]) -> str:
    """Like a wallet's transaction, with a tip far above the service's (first in its block)."""
    return broadcast_item(web3, account, item, fees=Fees(1000 * GWEI, 100 * GWEI))
