"""Swaps, wraps, sends and app fees on the devnet's Uniswap V2 pools, through the HTTP API.

Every test executes the quote's own steps with a wallet and checks balances on chain against
the quote's amounts.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import select
from web3 import Web3

from crossfill.store.tables import AppFee
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    balance,
    final_status,
    funded_user,
    pool_price_moved,
    request_quote,
    rpc_urls,
    stored_rows,
    usdc,
)
from tests.support.service import ServiceThread, StartService, run_cli
from tests.support.wallets.evm import execute_steps

ETHER = 10**18
# Under $1,000 at the devnet's $3,000/ETH: one confirmation, so automine's next block is enough.
SMALL = ETHER // 4


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _weth(devnet: RunningDevnet, chain_id: int) -> str:
    chain = devnet.deployment.chain(chain_id)
    assert chain is not None and chain.contracts.weth is not None
    return chain.contracts.weth


def _execute(
    service: ServiceThread,
    devnet: RunningDevnet,
    user: LocalAccount,
    fields: dict[str, Any],
    *,
    until: frozenset[str] = frozenset({"success", "refund"}),
    before_steps: Any = None,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """Quote, run the steps, hint the last transaction, wait for a final status."""
    body = {"user": user.address, "tradeType": "EXACT_INPUT", **fields}
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, body)
        if before_steps is not None:
            before_steps()
        sent = execute_steps(quote, user, rpc_urls(devnet))
        last = quote["steps"][-1]
        hint = http.post(
            "/transactions/index",
            json={"txHash": sent[last["id"]], "chainId": str(body["originChainId"])},
        )
        assert hint.status_code == 200
        status = final_status(http, last["requestId"], until=until)
    return quote, status, sent


def _fields(
    recipient: str,
    origin: tuple[int, str],
    destination: tuple[int, str],
    amount: int,
    **extra: Any,
) -> dict[str, Any]:
    """A quote body's route: (chain, currency) on each side, the amount, anything else."""
    return {
        "recipient": recipient,
        "originChainId": origin[0],
        "originCurrency": origin[1],
        "destinationChainId": destination[0],
        "destinationCurrency": destination[1],
        "amount": str(amount),
        **extra,
    }


def _gas_paid(devnet: RunningDevnet, chain_id: int, tx_hashes: list[str]) -> int:
    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[chain_id]))
    total = 0
    for tx_hash in tx_hashes:
        receipt = web3.eth.get_transaction_receipt(tx_hash)  # type: ignore[arg-type]
        total += int(receipt["gasUsed"]) * int(receipt["effectiveGasPrice"])
    return total


def test_cross_chain_swap_eth_to_usdc_pays_the_quoted_amount(service, devnet) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    usdc_out = usdc(devnet, DESTINATION)
    quote, status, _ = _execute(
        service,
        devnet,
        user,
        _fields(recipient, (ORIGIN, NATIVE), (DESTINATION, usdc_out), SMALL),
    )
    assert status["status"] == "success", status
    details = quote["details"]
    assert details["operation"] == "swap"
    assert details["route"]["destination"]["router"] == "uniswap-v2"
    received = balance(devnet, DESTINATION, usdc_out, recipient)
    # Nothing else traded in the pool between quote and fill: exactly the expected amount.
    assert received == int(details["currencyOut"]["amount"])
    assert received >= int(details["currencyOut"]["minimumAmount"])


def test_exact_output_cross_chain_swap_delivers_at_least_the_amount(service, devnet) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    usdc_out = usdc(devnet, DESTINATION)
    wanted = 700 * 10**6
    quote, status, _ = _execute(
        service,
        devnet,
        user,
        _fields(
            recipient, (ORIGIN, NATIVE), (DESTINATION, usdc_out), wanted, tradeType="EXACT_OUTPUT"
        ),
    )
    assert status["status"] == "success", status
    assert quote["details"]["currencyOut"]["minimumAmount"] == str(wanted)
    assert balance(devnet, DESTINATION, usdc_out, recipient) >= wanted


def test_destination_swap_below_minimum_fails_into_a_slippage_refund(service, devnet) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    usdc_out = usdc(devnet, DESTINATION)
    with ExitStack() as undo:
        _, status, sent = _execute(
            service,
            devnet,
            user,
            _fields(
                recipient, (ORIGIN, NATIVE), (DESTINATION, usdc_out), SMALL, slippageTolerance="100"
            ),
            # After the quote, before the deposit: the pool moves ~10% against the user.
            before_steps=lambda: undo.enter_context(
                pool_price_moved(devnet, DESTINATION, 60 * ETHER)
            ),
        )
    assert status["status"] == "refund", status
    assert status["failReason"] == "SLIPPAGE"
    assert balance(devnet, DESTINATION, usdc_out, recipient) == 0
    assert sent["deposit"] in status["inTxHashes"]


def test_same_chain_swap_eth_to_usdc_in_the_users_own_transaction(service, devnet) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    token = usdc(devnet, ORIGIN)
    native_before = balance(devnet, ORIGIN, NATIVE, user.address)
    quote, status, sent = _execute(
        service,
        devnet,
        user,
        _fields(recipient, (ORIGIN, NATIVE), (ORIGIN, token), ETHER // 10),
    )
    assert status["status"] == "success", status
    assert [step["id"] for step in quote["steps"]] == ["swap"]
    assert status["txHashes"] == [sent["swap"]]
    assert balance(devnet, ORIGIN, token, recipient) == int(
        quote["details"]["currencyOut"]["amount"]
    )
    spent = native_before - balance(devnet, ORIGIN, NATIVE, user.address)
    assert spent == ETHER // 10 + _gas_paid(devnet, ORIGIN, [sent["swap"]])


def test_same_chain_swap_usdc_to_eth_approves_the_approval_proxy(service, devnet) -> None:
    user, recipient = funded_user(devnet, usdc_amount=500 * 10**6), Account.create().address
    token = usdc(devnet, ORIGIN)
    quote, status, _ = _execute(
        service,
        devnet,
        user,
        _fields(recipient, (ORIGIN, token), (ORIGIN, NATIVE), 300 * 10**6),
    )
    assert status["status"] == "success", status
    chain = devnet.deployment.chain(ORIGIN)
    assert chain is not None
    approve = quote["steps"][0]
    assert approve["id"] == "approve"
    assert approve["items"][0]["data"]["to"] == token.lower()
    assert balance(devnet, ORIGIN, token, user.address) == 200 * 10**6
    assert balance(devnet, ORIGIN, NATIVE, recipient) == int(
        quote["details"]["currencyOut"]["amount"]
    )


def test_wrap_then_unwrap(service, devnet) -> None:
    user = funded_user(devnet)
    weth = _weth(devnet, ORIGIN)
    chain = {"originChainId": ORIGIN, "destinationChainId": ORIGIN}
    wrap, status, _ = _execute(
        service,
        devnet,
        user,
        {**chain, "originCurrency": NATIVE, "destinationCurrency": weth, "amount": str(ETHER)},
    )
    assert status["status"] == "success", status
    assert wrap["details"]["operation"] == "wrap"
    assert balance(devnet, ORIGIN, weth, user.address) == ETHER

    native_before = balance(devnet, ORIGIN, NATIVE, user.address)
    unwrap, status, sent = _execute(
        service,
        devnet,
        user,
        {
            **chain,
            "originCurrency": weth,
            "destinationCurrency": NATIVE,
            "amount": str(ETHER // 4),
            "tradeType": "EXACT_OUTPUT",
        },
    )
    assert status["status"] == "success", status
    assert unwrap["details"]["operation"] == "unwrap"
    assert [step["id"] for step in unwrap["steps"]] == ["approve", "swap"]
    assert balance(devnet, ORIGIN, weth, user.address) == ETHER - ETHER // 4
    gas = _gas_paid(devnet, ORIGIN, list(sent.values()))
    assert balance(devnet, ORIGIN, NATIVE, user.address) == native_before + ETHER // 4 - gas


def test_send_to_another_wallet(service, devnet) -> None:
    user, recipient = funded_user(devnet, usdc_amount=50 * 10**6), Account.create().address
    token = usdc(devnet, ORIGIN)
    quote, status, _ = _execute(
        service,
        devnet,
        user,
        _fields(recipient, (ORIGIN, token), (ORIGIN, token), 50 * 10**6),
    )
    assert status["status"] == "success", status
    assert quote["details"]["operation"] == "send"
    assert quote["steps"][-1]["id"] == "send"
    assert balance(devnet, ORIGIN, token, recipient) == 50 * 10**6


APP_A, APP_B = "0x" + "a1" * 20, "0x" + "b2" * 20
TWO_APP_FEES = [{"recipient": APP_A, "fee": "100"}, {"recipient": APP_B, "fee": "25"}]


def test_two_app_fee_recipients_are_recorded_and_owed(service, devnet, tmp_path) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    quote, status, _ = _execute(
        service,
        devnet,
        user,
        _fields(recipient, (ORIGIN, NATIVE), (DESTINATION, NATIVE), SMALL, appFees=TWO_APP_FEES),
    )
    assert status["status"] == "success", status
    assert quote["fees"]["app"]["amount"] == str(SMALL * 125 // 10_000)
    assert balance(devnet, DESTINATION, NATIVE, recipient) == int(
        quote["details"]["currencyOut"]["amount"]
    )
    request_id = quote["steps"][-1]["requestId"]
    shares = stored_rows(
        service, select(AppFee).where(AppFee.request_id == request_id).order_by(AppFee.id)
    )
    assert [(s.recipient, s.bps, s.state) for s in shares] == [
        (APP_A, 100, "owed"),
        (APP_B, 25, "owed"),
    ]
    assert [int(s.actual_amount) for s in shares] == [SMALL // 100, SMALL // 400]

    shown = run_cli(
        "app-fees", "balances", APP_A, home=tmp_path, deployment_file=devnet.deployment_path
    )
    assert shown.returncode == 0, shown.stderr
    assert str(SMALL // 100) in shown.stdout and "owed" in shown.stdout


def test_same_chain_app_fees_are_paid_in_the_users_transaction(service, devnet) -> None:
    user, recipient = funded_user(devnet, usdc_amount=1_000 * 10**6), Account.create().address
    token = usdc(devnet, ORIGIN)
    app_a, app_b = Account.create().address, Account.create().address
    quote, status, _ = _execute(
        service,
        devnet,
        user,
        _fields(
            recipient,
            (ORIGIN, token),
            (ORIGIN, NATIVE),
            1_000 * 10**6,
            appFees=[{"recipient": app_a, "fee": "100"}, {"recipient": app_b, "fee": "25"}],
        ),
    )
    assert status["status"] == "success", status
    assert balance(devnet, ORIGIN, token, app_a) == 10 * 10**6
    assert balance(devnet, ORIGIN, token, app_b) == 2_500_000
    assert balance(devnet, ORIGIN, NATIVE, recipient) == int(
        quote["details"]["currencyOut"]["amount"]
    )


def test_same_chain_swap_made_while_the_service_is_down_settles_after_restart(
    start_service, devnet
) -> None:
    """No hint, no running indexer when the batch lands: the restarted indexer's scan finds it."""
    first = start_service(run_workers=True)
    user, recipient = funded_user(devnet), Account.create().address
    token = usdc(devnet, ORIGIN)
    body = {
        "user": user.address,
        "tradeType": "EXACT_INPUT",
        **_fields(recipient, (ORIGIN, NATIVE), (ORIGIN, token), ETHER // 20),
    }
    with httpx.Client(base_url=first.base_url, timeout=10) as http:
        quote = request_quote(http, body)
    first.stop()
    sent = execute_steps(quote, user, rpc_urls(devnet))
    second = start_service(run_workers=True)
    with httpx.Client(base_url=second.base_url, timeout=10) as http:
        status = final_status(http, quote["steps"][-1]["requestId"])
    assert status["status"] == "success", status
    assert status["txHashes"] == [sent["swap"]]
    assert balance(devnet, ORIGIN, token, recipient) == int(
        quote["details"]["currencyOut"]["amount"]
    )
