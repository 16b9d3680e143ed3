"""Swaps, wraps, sends and app fees on the devnet's Uniswap V2 pools, through the HTTP API.

Every test has a user quote with the Python client, execute the quote's own steps with a
wallet, and checks balances on chain against the quote's amounts.
"""

from __future__ import annotations

from typing import Any

import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_typing import HexStr
from sqlalchemy import select
from web3 import Web3

from crossfill.kinds.evm.config import evm_chain
from crossfill.store.tables import AppFee
from crossfill_client import (
    NO_RETRIES,
    ExecutionResult,
    QuoteRequest,
    RequestFailed,
    RequestStatus,
)
from crossfill_client.models import AppFee as AppFeeShare
from crossfill_client.models import EvmTransactionData, Quote
from crossfill_client.progress import ProgressEvent, TransactionSubmitted
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    balance,
    funded_user,
    pool_price_moved,
    rpc_urls,
    stored_rows,
    usdc,
)
from tests.e2e.user_client import SENT_ONLY, UserClient, evm_wallet, following_until, succeeded
from tests.support.service import ServiceThread, StartService, run_cli

ETHER = 10**18
# Under $1,000 at the devnet's $3,000/ETH: one confirmation, so automine's next block is enough.
SMALL = ETHER // 4


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _weth(devnet: RunningDevnet, chain_id: int) -> str:
    chain = evm_chain(devnet.deployment, chain_id)
    assert chain is not None and chain.contracts.weth is not None
    return chain.contracts.weth


def _route(
    user: LocalAccount,
    recipient: str | None,
    origin: tuple[int, str],
    destination: tuple[int, str],
    amount: int,
    **extra: Any,
) -> QuoteRequest:
    """What the user quotes: the recipient (None: the user), (chain, currency) on each side,
    the amount, anything else."""
    return QuoteRequest(
        user=user.address,
        recipient=recipient,
        origin_chain_id=origin[0],
        origin_currency=origin[1],
        destination_chain_id=destination[0],
        destination_currency=destination[1],
        amount=amount,
        **extra,
    )


def _executed(user_client: UserClient, user: LocalAccount, quote: Quote) -> ExecutionResult:
    """The quote's steps executed by the user's wallet, its deposit hinted (and the hint
    taken), followed to the end."""
    hinted = len(user_client.hints_answered())
    result = user_client.execute(quote, evm_wallet(user))
    assert user_client.hints_answered()[hinted:] == [200]
    return result


def _sent(result: ExecutionResult) -> dict[str, str]:
    """Step id → the hash of the transaction the client sent for it."""
    return {sent.step_id: sent.tx_id for sent in result.transactions}


def _gas_paid(devnet: RunningDevnet, chain_id: int, tx_hashes: list[str]) -> int:
    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[chain_id]))
    total = 0
    for tx_hash in tx_hashes:
        receipt = web3.eth.get_transaction_receipt(HexStr(tx_hash))
        total += int(receipt["gasUsed"]) * int(receipt["effectiveGasPrice"])
    return total


def test_cross_chain_swap_eth_to_usdc_pays_the_quoted_amount(
    devnet: RunningDevnet, user_client: UserClient
) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    usdc_out = usdc(devnet, DESTINATION)
    quote = user_client.quote(
        _route(user, recipient, (ORIGIN, NATIVE), (DESTINATION, usdc_out), SMALL)
    )
    succeeded(_executed(user_client, user, quote))
    details = quote.details
    assert details.operation == "swap"
    assert details.route is not None and details.route.destination.router == "uniswap-v2"
    received = balance(devnet, DESTINATION, usdc_out, recipient)
    # Nothing else traded in the pool between quote and fill: exactly the expected amount.
    assert received == details.currency_out.amount
    assert details.currency_out.minimum_amount is not None
    assert received >= details.currency_out.minimum_amount


def test_exact_output_cross_chain_swap_delivers_at_least_the_amount(
    devnet: RunningDevnet, user_client: UserClient
) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    usdc_out = usdc(devnet, DESTINATION)
    wanted = 700 * 10**6
    quote = user_client.quote(
        _route(
            user, recipient, (ORIGIN, NATIVE), (DESTINATION, usdc_out), wanted,
            trade_type="EXACT_OUTPUT",
        )
    )  # fmt: skip
    succeeded(_executed(user_client, user, quote))
    assert quote.details.currency_out.minimum_amount == wanted
    assert balance(devnet, DESTINATION, usdc_out, recipient) >= wanted


def test_destination_swap_below_minimum_fails_into_a_slippage_refund(
    devnet: RunningDevnet, user_client: UserClient
) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    usdc_out = usdc(devnet, DESTINATION)
    quote = user_client.quote(
        _route(
            user, recipient, (ORIGIN, NATIVE), (DESTINATION, usdc_out), SMALL,
            slippage_tolerance=100,
        )
    )  # fmt: skip
    events: list[ProgressEvent] = []
    # After the quote, before the deposit: the pool moves ~10% against the user.
    with pool_price_moved(devnet, DESTINATION, 60 * ETHER), pytest.raises(RequestFailed) as ended:
        user_client.execute(
            quote,
            evm_wallet(user),
            on_progress=events.append,
            options=following_until(RequestStatus.SUCCESS, RequestStatus.REFUND),
        )
    status = ended.value.record
    assert status.status is RequestStatus.REFUND, status
    assert status.fail_reason == "SLIPPAGE"
    assert balance(devnet, DESTINATION, usdc_out, recipient) == 0
    (deposit,) = [
        event.tx_id
        for event in events
        if isinstance(event, TransactionSubmitted) and event.step_id == "deposit"
    ]
    assert deposit in status.in_tx_hashes
    assert user_client.hints_answered() == [200]


def test_same_chain_swap_eth_to_usdc_in_the_users_own_transaction(
    devnet: RunningDevnet, user_client: UserClient
) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    token = usdc(devnet, ORIGIN)
    native_before = balance(devnet, ORIGIN, NATIVE, user.address)
    quote = user_client.quote(
        _route(user, recipient, (ORIGIN, NATIVE), (ORIGIN, token), ETHER // 10)
    )
    result = _executed(user_client, user, quote)
    status, sent = succeeded(result), _sent(result)
    assert [step.id for step in quote.steps] == ["swap"]
    assert status.tx_hashes == (sent["swap"],)
    assert balance(devnet, ORIGIN, token, recipient) == quote.details.currency_out.amount
    spent = native_before - balance(devnet, ORIGIN, NATIVE, user.address)
    assert spent == ETHER // 10 + _gas_paid(devnet, ORIGIN, [sent["swap"]])


def test_same_chain_swap_usdc_to_eth_approves_the_approval_proxy(
    devnet: RunningDevnet, user_client: UserClient
) -> None:
    user, recipient = funded_user(devnet, usdc_amount=500 * 10**6), Account.create().address
    token = usdc(devnet, ORIGIN)
    quote = user_client.quote(
        _route(user, recipient, (ORIGIN, token), (ORIGIN, NATIVE), 300 * 10**6)
    )
    succeeded(_executed(user_client, user, quote))
    approve = quote.steps[0]
    assert approve.id == "approve"
    item = approve.items[0].data
    assert isinstance(item, EvmTransactionData) and item.to == token.lower()
    assert balance(devnet, ORIGIN, token, user.address) == 200 * 10**6
    assert balance(devnet, ORIGIN, NATIVE, recipient) == quote.details.currency_out.amount


def test_wrap_then_unwrap(devnet: RunningDevnet, user_client: UserClient) -> None:
    user = funded_user(devnet)
    weth = _weth(devnet, ORIGIN)
    wrap = user_client.quote(_route(user, None, (ORIGIN, NATIVE), (ORIGIN, weth), ETHER))
    succeeded(_executed(user_client, user, wrap))
    assert wrap.details.operation == "wrap"
    assert balance(devnet, ORIGIN, weth, user.address) == ETHER

    native_before = balance(devnet, ORIGIN, NATIVE, user.address)
    unwrap = user_client.quote(
        _route(
            user, None, (ORIGIN, weth), (ORIGIN, NATIVE), ETHER // 4,
            trade_type="EXACT_OUTPUT",
        )
    )  # fmt: skip
    sent = _sent(_executed(user_client, user, unwrap))
    assert unwrap.details.operation == "unwrap"
    assert [step.id for step in unwrap.steps] == ["approve", "swap"]
    assert balance(devnet, ORIGIN, weth, user.address) == ETHER - ETHER // 4
    gas = _gas_paid(devnet, ORIGIN, list(sent.values()))
    assert balance(devnet, ORIGIN, NATIVE, user.address) == native_before + ETHER // 4 - gas


def test_send_to_another_wallet(devnet: RunningDevnet, user_client: UserClient) -> None:
    user, recipient = funded_user(devnet, usdc_amount=50 * 10**6), Account.create().address
    token = usdc(devnet, ORIGIN)
    quote = user_client.quote(_route(user, recipient, (ORIGIN, token), (ORIGIN, token), 50 * 10**6))
    succeeded(_executed(user_client, user, quote))
    assert quote.details.operation == "send"
    assert quote.steps[-1].id == "send"
    assert balance(devnet, ORIGIN, token, recipient) == 50 * 10**6


APP_A, APP_B = "0x" + "a1" * 20, "0x" + "b2" * 20
TWO_APP_FEES = [AppFeeShare(recipient=APP_A, fee=100), AppFeeShare(recipient=APP_B, fee=25)]


def test_two_app_fee_recipients_are_recorded_and_owed(
    service: ServiceThread, devnet: RunningDevnet, user_client: UserClient, tmp_path
) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    quote = user_client.quote(
        _route(user, recipient, (ORIGIN, NATIVE), (DESTINATION, NATIVE), SMALL,
               app_fees=TWO_APP_FEES)
    )  # fmt: skip
    succeeded(_executed(user_client, user, quote))
    assert quote.fees.app is not None and quote.fees.app.amount == SMALL * 125 // 10_000
    assert balance(devnet, DESTINATION, NATIVE, recipient) == quote.details.currency_out.amount
    shares = stored_rows(
        service, select(AppFee).where(AppFee.request_id == quote.request_id).order_by(AppFee.id)
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


def test_same_chain_app_fees_are_paid_in_the_users_transaction(
    devnet: RunningDevnet, user_client: UserClient
) -> None:
    user, recipient = funded_user(devnet, usdc_amount=1_000 * 10**6), Account.create().address
    token = usdc(devnet, ORIGIN)
    app_a, app_b = Account.create().address, Account.create().address
    quote = user_client.quote(
        _route(
            user, recipient, (ORIGIN, token), (ORIGIN, NATIVE), 1_000 * 10**6,
            app_fees=[AppFeeShare(recipient=app_a, fee=100), AppFeeShare(recipient=app_b, fee=25)],
        )
    )  # fmt: skip
    succeeded(_executed(user_client, user, quote))
    assert balance(devnet, ORIGIN, token, app_a) == 10 * 10**6
    assert balance(devnet, ORIGIN, token, app_b) == 2_500_000
    assert balance(devnet, ORIGIN, NATIVE, recipient) == quote.details.currency_out.amount


def test_same_chain_swap_made_while_the_service_is_down_settles_after_restart(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    """No hint, no running indexer when the batch lands: the restarted indexer's scan finds it."""
    first = start_service(run_workers=True)
    user, recipient = funded_user(devnet), Account.create().address
    token = usdc(devnet, ORIGIN)
    with UserClient(first.base_url, rpc_urls(devnet)) as user_client:
        quote = user_client.quote(
            _route(user, recipient, (ORIGIN, NATIVE), (ORIGIN, token), ETHER // 20)
        )
    first.stop()
    # The service is down: the swap is only sent (its hint reaches no one), not followed.
    with UserClient(first.base_url, rpc_urls(devnet), retry=NO_RETRIES) as user_client:
        sent = _sent(user_client.execute(quote, evm_wallet(user), options=SENT_ONLY))
    second = start_service(run_workers=True)
    with UserClient(second.base_url, rpc_urls(devnet)) as user_client:
        status = user_client.wait(quote.request_id)
    assert status.status is RequestStatus.SUCCESS, status
    assert status.tx_hashes == (sent["swap"],)
    assert balance(devnet, ORIGIN, token, recipient) == quote.details.currency_out.amount
