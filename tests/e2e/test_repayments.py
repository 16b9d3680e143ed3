"""The solver repaid out of the origin Depository: once a bridge is filled and its fill final on
the destination, the solver is paid exactly the deposit (its amount, its currency), once; a fill
not yet final is not repaid; a refunded deposit never is; a deposit some other payout paid out
under its nonce first is recorded so and never tried again."""

from __future__ import annotations

import time
from typing import Any

import httpx
from eth_account.signers.local import LocalAccount
from hexbytes import HexBytes
from sqlalchemy import select
from web3 import Web3

from crossfill.app.refunds import payout_call, payout_nonce
from crossfill.devnet import accounts
from crossfill.devnet.anvil import anvil_rpc
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.domain.call_request import CallRequest, sign_call_request
from crossfill.kinds.evm.config import evm_chains
from crossfill.store.tables import Deposit, SentTransaction
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    REFUNDED,
    balance,
    deposit_native,
    final_status,
    funded_user,
    native_bridge,
    quote_request_id,
    request_quote,
    rpc_urls,
    stored_rows,
    usdc,
)
from tests.e2e.repaying import FINAL_AT, depository_payouts, repaying, repayments
from tests.money_invariant import account_for_money, heads
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps

USDC_IN = 20_000_000
# The repayer looks for owed deposits every second: a wait it has surely ticked through.
REPAYER_TICKS = 2.5


def _usdc_bridge(devnet: RunningDevnet, user: str) -> dict[str, Any]:
    return native_bridge(
        user,
        originCurrency=usdc(devnet, ORIGIN),
        destinationCurrency=usdc(devnet, DESTINATION),
        amount=str(USDC_IN),
    )


def _bridged(
    service: ServiceThread, devnet: RunningDevnet, bodies: list[dict[str, Any]], user: LocalAccount
) -> list[dict[str, Any]]:
    """Each body quoted, deposited and filled; the quotes."""
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quotes = [request_quote(http, body) for body in bodies]
        for quote in quotes:
            execute_steps(quote, user, rpc_urls(devnet))
        for quote in quotes:
            assert final_status(http, quote_request_id(quote))["status"] == "success"
    return quotes


def _mine_destination(devnet: RunningDevnet, blocks: int) -> None:
    anvil_rpc(rpc_urls(devnet)[DESTINATION], "anvil_mine", [hex(blocks)])


def _all_settled(service: ServiceThread, count: int) -> bool:
    rows = repayments(service.settings.database)
    return len(rows) == count and all(row.state != "sending" for row in rows)


def test_a_final_fill_repays_the_solver_exactly_the_deposit_in_one_batch(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    service = start_service(repaying(devnet.deployment), run_workers=True)
    since = heads(devnet.deployment)
    user = funded_user(devnet, usdc_amount=USDC_IN)
    solver = accounts.solver().address.lower()
    token = usdc(devnet, ORIGIN)
    origin = evm_chains(devnet.deployment)[0]
    quotes = _bridged(
        service, devnet, [native_bridge(user.address), _usdc_bridge(devnet, user.address)], user
    )
    deposited = {NATIVE: int(quotes[0]["details"]["currencyIn"]["amount"]), token: USDC_IN}
    held = {
        currency: balance(devnet, ORIGIN, currency, origin.contracts.depository)
        for currency in deposited
    }
    owned = {currency: balance(devnet, ORIGIN, currency, solver) for currency in deposited}

    time.sleep(REPAYER_TICKS)  # the fills are 1 or 2 blocks deep: not final yet
    assert repayments(service.settings.database) == []
    _mine_destination(devnet, FINAL_AT)
    assert wait_for(lambda: _all_settled(service, 2), timeout=30, interval=0.2)

    rows = repayments(service.settings.database)
    assert [row.state for row in rows] == ["repaid", "repaid"]
    (tx_hash,) = {row.tx_hash for row in rows}  # both in one transaction
    web3 = Web3(Web3.HTTPProvider(origin.rpc_url))
    receipt = web3.eth.get_transaction_receipt(HexBytes(str(tx_hash)))
    assert receipt["status"] == 1 and receipt["to"].lower() == origin.contracts.multicaller.lower()
    paid = {
        (p.recipient, p.currency): p.amount
        for p in depository_payouts(devnet, since=receipt["blockNumber"])
    }
    assert paid == {(solver, NATIVE): deposited[NATIVE], (solver, token.lower()): USDC_IN}
    fee = int(receipt["gasUsed"]) * int(receipt["effectiveGasPrice"])
    assert balance(devnet, ORIGIN, NATIVE, solver) - owned[NATIVE] == deposited[NATIVE] - fee
    assert balance(devnet, ORIGIN, token, solver) - owned[token] == USDC_IN
    for currency, amount in deposited.items():
        assert (
            held[currency] - balance(devnet, ORIGIN, currency, origin.contracts.depository)
            == amount
        )
    assert sum(row.gas_used or 0 for row in rows) == receipt["gasUsed"]
    assert [row.batch_size for row in rows] == [2, 2]
    assert sum(int(row.fee or 0) for row in rows) == fee

    report = account_for_money(devnet.deployment, service.settings.database, since=since)
    assert (report.filled, report.repaid, report.unaccounted) == (2, 2, [])


def test_a_refunded_deposit_is_never_repaid(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    service = start_service(repaying(devnet.deployment, final_at=1), run_workers=True)
    since = heads(devnet.deployment)
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        underpaid = request_quote(http, native_bridge(user.address))
        deposit_native(
            devnet, user, underpaid, int(underpaid["details"]["currencyIn"]["amount"]) // 2
        )
        assert final_status(http, quote_request_id(underpaid), until=REFUNDED)["status"] == "refund"
    (filled,) = _bridged(service, devnet, [native_bridge(user.address)], user)
    assert wait_for(lambda: _all_settled(service, 1), timeout=30, interval=0.2)
    time.sleep(REPAYER_TICKS)  # the refunded deposit is not repaid later either

    (repaid,) = repayments(service.settings.database)
    assert (repaid.request_id, repaid.state) == (quote_request_id(filled), "repaid")
    payouts = depository_payouts(devnet, since=since[ORIGIN])
    assert sorted(p.recipient for p in payouts) == sorted(
        [accounts.solver().address.lower(), user.address.lower()]
    )
    report = account_for_money(devnet.deployment, service.settings.database, since=since)
    assert (report.filled, report.refunded, report.repaid, report.unaccounted) == (1, 1, 1, [])


def test_a_deposit_paid_out_first_by_another_payout_is_recorded_and_not_retried(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    """A refund signed for the deposit earlier (here by hand) executes before the fill is
    final: the repayment meets NonceAlreadyUsed, records it, and sends nothing more."""
    service = start_service(repaying(devnet.deployment), run_workers=True)
    since = heads(devnet.deployment)
    user = funded_user(devnet)
    origin = evm_chains(devnet.deployment)[0]
    (quote,) = _bridged(service, devnet, [native_bridge(user.address)], user)
    (deposit,) = stored_rows(
        service, select(Deposit).where(Deposit.request_id == quote_request_id(quote))
    )
    payout = CallRequest(
        calls=(payout_call(user.address, NATIVE, int(deposit.amount), native=True),),
        nonce=payout_nonce(deposit),
        expiration=int(time.time()) + 600,
    )
    signature = sign_call_request(
        accounts.allocator(), payout, chain_id=ORIGIN, depository=origin.contracts.depository
    )
    stranger = signing_web3(origin.rpc_url, accounts.deployer())
    depository = contract_at(stranger, "Depository", origin.contracts.depository)
    send(stranger, depository.functions.execute(payout.as_tuple(), signature))
    _mine_destination(devnet, FINAL_AT)

    assert wait_for(lambda: _all_settled(service, 1), timeout=30, interval=0.2)
    (row,) = repayments(service.settings.database)
    assert (row.state, row.tx_hash) == ("paid_elsewhere", None)
    time.sleep(REPAYER_TICKS)
    assert [r.state for r in repayments(service.settings.database)] == ["paid_elsewhere"]
    repaying_sent = stored_rows(
        service, select(SentTransaction).where(SentTransaction.purpose.like("repay:%"))
    )
    assert repaying_sent == []  # never sent, not even once
    (paid_once,) = depository_payouts(devnet, since=since[ORIGIN])
    assert (paid_once.recipient, paid_once.amount) == (user.address.lower(), int(deposit.amount))
