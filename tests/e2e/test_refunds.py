"""Deposits that cannot be filled end in a refund with the right reason, paid on chain."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_typing import HexStr
from sqlalchemy import select
from web3 import Web3

from crossfill.contracts import calldata
from crossfill.devnet import accounts
from crossfill.devnet.anvil import anvil_rpc, set_native_balance
from crossfill.devnet.seed import DEVNET_ETH_USD
from crossfill.kinds.evm.config import evm_chains
from crossfill.store.tables import Deposit
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    REFUNDED,
    balance,
    bridge_request,
    deposit_usdc,
    final_status,
    funded_user,
    journal,
    request_quote,
    rpc_urls,
    usdc,
    with_inventory_wait,
)
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.support.database import rows_in
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for
from tests.support.wallets.evm import broadcast_item, execute_steps, send_item

ETH = 10**18


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _native_body(user: LocalAccount, **overrides: Any) -> dict[str, Any]:
    return {
        "user": user.address,
        "recipient": Account.create().address,
        "originChainId": ORIGIN,
        "destinationChainId": DESTINATION,
        "originCurrency": NATIVE,
        "destinationCurrency": NATIVE,
        "amount": str(ETH // 10),
        "tradeType": "EXACT_INPUT",
        **overrides,
    }


def _deposit(devnet: RunningDevnet, user: LocalAccount, to: str, data: bytes, value: int) -> str:
    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    item = {"to": to, "data": calldata.hex_data(data), "value": str(value), "chainId": ORIGIN}
    return send_item(web3, user, item)


def _deposits(service: ServiceThread) -> list[Deposit]:
    return rows_in(service.settings.database, select(Deposit).order_by(Deposit.id))


def _order_id(quote: dict[str, Any]) -> bytes:
    return bytes.fromhex(quote["protocol"]["v2"]["orderId"][2:])


def _gas_cost_in(currency: str, receipt: Any) -> int:
    """What a transaction cost, in `currency` units at the devnet's prices."""
    wei = int(receipt["gasUsed"]) * int(receipt["effectiveGasPrice"])
    if currency == NATIVE:
        return wei
    return wei * DEVNET_ETH_USD * 10**6 // 10**18  # USDC: 6 decimals, 1 USD


def _assert_refunded(devnet, status, user_address, currency, before, deposited) -> int:
    """Refunded on chain: the refund succeeded, and kept back only about what its gas cost."""
    assert status["status"] == "refund", status
    assert status["refundFailReason"] == "N/A"
    (refund_hash,) = status["txHashes"]
    origin = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    receipt = origin.eth.get_transaction_receipt(refund_hash)
    assert receipt["status"] == 1
    returned: int = balance(devnet, ORIGIN, currency, user_address) - before
    kept = deposited - returned
    cost = _gas_cost_in(currency, receipt)
    assert 0 < returned < deposited
    assert cost <= kept <= 3 * cost + 1, (kept, cost)
    return returned


def test_underpaid_deposit_is_refunded_with_reason(service, devnet) -> None:
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, _native_body(user))
        paid = int(quote["details"]["currencyIn"]["amount"]) - 1000
        depository = evm_chains(devnet.deployment)[0].contracts.depository
        _deposit(
            devnet, user, depository, calldata.deposit_native(user.address, _order_id(quote)), paid
        )
        before = balance(devnet, ORIGIN, NATIVE, user.address)
        status = final_status(http, quote["steps"][0]["requestId"], until=REFUNDED)
    assert status["failReason"] == "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL"
    _assert_refunded(devnet, status, user.address, NATIVE, before, paid)


def test_deposit_in_the_wrong_currency_is_refunded_in_that_currency(service, devnet) -> None:
    user = funded_user(devnet, usdc_amount=30_000_000)
    token = usdc(devnet, ORIGIN)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, _native_body(user))
        deposit_usdc(devnet, user, quote, 30_000_000)
        before = balance(devnet, ORIGIN, token, user.address)
        status = final_status(http, quote["steps"][0]["requestId"], until=REFUNDED)
    assert status["failReason"] == "INCORRECT_DEPOSIT_CURRENCY"
    _assert_refunded(devnet, status, user.address, token, before, 30_000_000)


def test_second_deposit_for_a_filled_order_is_refunded_as_double_spend(
    service: ServiceThread, devnet: RunningDevnet, user_client: UserClient
) -> None:
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = user_client.quote(bridge_request(user.address, recipient=Account.create().address))
        request_id = quote.request_id
        succeeded(user_client.execute(quote, evm_wallet(user)))
        before = balance(devnet, ORIGIN, NATIVE, user.address)
        # The quote's deposit item, as it came, sent once more.
        wire: Any = user_client.answered("/quote/v2")
        item = wire["steps"][0]["items"][0]["data"]
        origin = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
        again = send_item(origin, user, item)
        # At the deposit's own block: the refund may already have landed by the time we look.
        mined_in = origin.eth.get_transaction_receipt(HexStr(again))["blockNumber"]
        after_sending = origin.eth.get_balance(user.address, block_identifier=mined_in)

        def refunded() -> bool:
            return any(d.tx_hash == again and d.refund_status == "done" for d in _deposits(service))

        assert wait_for(refunded, timeout=30, interval=0.3)
        assert (
            http.get("/intents/status/v3", params={"requestId": request_id}).json()["status"]
            == "success"
        )
    (double,) = [d for d in _deposits(service) if d.tx_hash == again]
    assert double.outcome == "DOUBLE_SPEND"
    assert balance(devnet, ORIGIN, NATIVE, user.address) - after_sending == int(
        double.refund_amount or 0
    )
    assert before - after_sending > int(double.refund_amount or 0)  # the deposit itself plus gas


def test_solver_without_inventory_refunds(start_service, devnet) -> None:
    # A fill whose output the inventory cannot cover waits for repayments or a top-up, here a
    # short while, then is refunded as over the solver's capacity.
    service = start_service(with_inventory_wait(devnet.deployment, 2), run_workers=True)
    user = funded_user(devnet)
    destination = evm_chains(devnet.deployment)[1]
    solver = accounts.solver().address
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, _native_body(user))
        web3 = Web3(Web3.HTTPProvider(destination.rpc_url))
        inventory = web3.eth.get_balance(solver)
        set_native_balance(destination.rpc_url, solver, 10**15)  # below the order, above its gas
        try:
            assert wait_for(lambda: True, timeout=1)  # let the follower see the new balance
            execute_steps(quote, user, rpc_urls(devnet))
            before = balance(devnet, ORIGIN, NATIVE, user.address)
            status = final_status(http, quote["steps"][0]["requestId"], until=REFUNDED)
        finally:
            set_native_balance(destination.rpc_url, solver, inventory)
    assert status["failReason"] == "SOLVER_CAPACITY_EXCEEDED"
    _assert_refunded(
        devnet, status, user.address, NATIVE, before, int(quote["details"]["currencyIn"]["amount"])
    )


def test_fill_that_would_revert_is_refunded(service, devnet) -> None:
    user = funded_user(devnet)
    # The Depository takes no plain ether: paying it as the recipient makes the fill revert.
    recipient = evm_chains(devnet.deployment)[1].contracts.depository
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, _native_body(user, recipient=recipient))
        execute_steps(quote, user, rpc_urls(devnet))
        before = balance(devnet, ORIGIN, NATIVE, user.address)
        status = final_status(http, quote["steps"][0]["requestId"], until=REFUNDED)
    assert status["failReason"] == "EXECUTION_REVERTED"
    _assert_refunded(
        devnet, status, user.address, NATIVE, before, int(quote["details"]["currencyIn"]["amount"])
    )


def test_a_deposit_smaller_than_its_refund_gas_is_kept_and_decides_nothing(service, devnet) -> None:
    """Dust cannot pay its own refund: it is kept, with the reason on its deposit, and the
    request it named keeps waiting for its real deposit."""
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, _native_body(user))
        depository = evm_chains(devnet.deployment)[0].contracts.depository
        tx_hash = _deposit(
            devnet, user, depository, calldata.deposit_native(user.address, _order_id(quote)), 1
        )

        def kept() -> bool:
            return any(d.tx_hash == tx_hash and d.refund_status for d in _deposits(service))

        assert wait_for(kept, timeout=30, interval=0.3)
        status = http.get(
            "/intents/status/v3", params={"requestId": quote["steps"][0]["requestId"]}
        ).json()
    (dust,) = [d for d in _deposits(service) if d.tx_hash == tx_hash]
    assert (dust.outcome, dust.request_id) == ("DEPOSITED_AMOUNT_TOO_LOW_TO_FILL", None)
    assert (dust.refund_status, dust.refund_fail_reason) == ("skipped", "AMOUNT_TOO_LOW_TO_REFUND")
    assert status["status"] == "waiting"
    assert status["inTxHashes"] == []


def test_a_deposit_for_an_unknown_order_is_refunded_to_its_depositor(service, devnet) -> None:
    user = funded_user(devnet)
    depository = evm_chains(devnet.deployment)[0].contracts.depository
    paid = 10**16
    tx_hash = _deposit(
        devnet, user, depository, calldata.deposit_native(user.address, b"\x42" * 32), paid
    )
    after_sending = balance(devnet, ORIGIN, NATIVE, user.address)

    def refunded() -> bool:
        return any(d.tx_hash == tx_hash and d.refund_status == "done" for d in _deposits(service))

    assert wait_for(refunded, timeout=30, interval=0.3)
    (orphan,) = [d for d in _deposits(service) if d.tx_hash == tx_hash]
    assert (orphan.outcome, orphan.request_id) == ("ORPHANED_DEPOSIT_REFUND", None)
    returned = balance(devnet, ORIGIN, NATIVE, user.address) - after_sending
    assert returned == int(orphan.refund_amount or 0)
    assert 0 < paid - returned < paid // 10  # all of it but the refund's gas


def test_deposit_after_the_quote_expired_is_refunded(start_service, devnet) -> None:
    quotes = devnet.deployment.quotes.model_copy(update={"min_ttl_seconds": 1})
    service = start_service(
        devnet.deployment.model_copy(update={"quotes": quotes}), run_workers=True
    )
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, _native_body(user, ttl=1))
        time.sleep(2.5)
        # The deposit's block comes after the quote's expiry, by the wall clock: the shared
        # devnet's own clock may lag it (after anvil_reorg in test_reorg).
        origin_rpc = rpc_urls(devnet)[ORIGIN]
        latest = Web3(Web3.HTTPProvider(origin_rpc)).eth.get_block("latest")["timestamp"]
        anvil_rpc(origin_rpc, "evm_setNextBlockTimestamp", [max(int(time.time()), latest + 1)])
        paid = int(quote["details"]["currencyIn"]["amount"])
        deposit = execute_steps(quote, user, rpc_urls(devnet))["deposit"]
        before = balance(devnet, ORIGIN, NATIVE, user.address)
        status = final_status(http, quote["steps"][0]["requestId"], until=REFUNDED)
    assert status["failReason"] == "ORDER_EXPIRED"
    assert status["inTxHashes"] == [deposit]
    _assert_refunded(devnet, status, user.address, NATIVE, before, paid)


def test_a_refund_that_reverts_is_signed_again_and_paid(service, devnet) -> None:
    """The refund is mined while the Depository holds nothing (it reverts); once funds are
    back, the refunder signs a fresh one instead of waiting on the reverted one forever."""
    user = funded_user(devnet)
    origin_rpc = rpc_urls(devnet)[ORIGIN]
    depository = evm_chains(devnet.deployment)[0].contracts.depository
    origin = Web3(Web3.HTTPProvider(origin_rpc))
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, _native_body(user))
        request_id = quote["steps"][0]["requestId"]
        paid = int(quote["details"]["currencyIn"]["amount"]) - 1000
        deposit = calldata.deposit_native(user.address, _order_id(quote))
        anvil_rpc(origin_rpc, "evm_setAutomine", [False])
        try:
            item = {"to": depository, "data": calldata.hex_data(deposit), "value": str(paid)}
            tx_hash = broadcast_item(origin, user, {**item, "chainId": ORIGIN})
            anvil_rpc(origin_rpc, "evm_mine", [])
            assert origin.eth.get_transaction_receipt(HexStr(tx_hash))["status"] == 1
            assert wait_for(lambda: len(journal(service, request_id)) == 1, timeout=20)
            held = origin.eth.get_balance(Web3.to_checksum_address(depository))
            set_native_balance(origin_rpc, depository, 0)
            anvil_rpc(origin_rpc, "evm_mine", [])  # the refund is mined and reverts
            set_native_balance(origin_rpc, depository, held)
        finally:
            anvil_rpc(origin_rpc, "evm_setAutomine", [True])
        before = balance(devnet, ORIGIN, NATIVE, user.address)
        status = final_status(http, request_id, until=REFUNDED)
    first, *later = journal(service, request_id)
    assert first.status == "failed"
    assert later and later[-1].status == "mined" and later[-1].nonce > first.nonce
    # Both refund transactions are the request's: the reverted one, then the one that paid.
    assert status["txHashes"] == [first.tx_hash, later[-1].tx_hash]
    paying = {**status, "txHashes": status["txHashes"][-1:]}
    _assert_refunded(devnet, paying, user.address, NATIVE, before, paid)
