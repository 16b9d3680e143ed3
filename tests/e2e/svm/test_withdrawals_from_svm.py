"""Withdrawals from the SVM chain end to end: the quote's SVM transaction (a transfer to the
vault plus a Memo of the order id) signed with a solders keypair, the deposit indexed, the
fill on the EVM destination; wrong amount, wrong mint and no memo refunded on the SVM chain."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from eth_account import Account
from solders.keypair import Keypair
from sqlalchemy import select

from crossfill.config import Deployment
from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from crossfill.kinds.svm import programs
from crossfill.kinds.svm.config import svm_chains
from crossfill.store.tables import ChainCursor
from crossfill_client import RequestStatus
from crossfill_client.models import SvmTransactionData
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    REFUNDED,
    balance,
    final_status,
    request_quote,
    stored_rows,
    usdc,
)
from tests.e2e.svm.routes import from_svm
from tests.e2e.user_client import SENT_ONLY, UserClient, succeeded, svm_wallet
from tests.e2e.wire import validate_against
from tests.support.service import StartService
from tests.support.waiting import wait_for
from tests.support.wallets.svm import item_instructions, sign_and_send, sol_balance, token_balance

SVM_ID = 792703809
FEE = 5000  # lamports per signature


def test_sol_to_eth_through_the_quoted_svm_transaction(
    devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm], user_client: UserClient
) -> None:
    node, _seeded = svm_node
    user, recipient = svm_accounts.users()[0], Account.create().address
    quote = user_client.quote(from_svm(user, recipient, 2 * 10**9, max_route_length=4))
    validate_against("quote", user_client.answered("/quote/v2"))
    (step,) = quote.steps
    item = step.items[0].data
    assert step.kind == "transaction" and isinstance(item, SvmTransactionData)
    programs_used = [ix.program_id for ix in item.instructions]
    assert programs_used == [programs.NATIVE_SOL_ADDRESS, str(programs.MEMO_PROGRAM_ID)]
    vault_before = sol_balance(node.rpc_url, svm_accounts.solver().pubkey())
    succeeded(user_client.execute(quote, svm_wallet(user)))
    assert balance(devnet, DESTINATION, NATIVE, recipient) == quote.details.currency_out.amount
    assert sol_balance(node.rpc_url, svm_accounts.solver().pubkey()) == vault_before + 2 * 10**9


def test_svm_usdc_to_evm_usdc(
    devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm], user_client: UserClient
) -> None:
    node, seeded = svm_node
    user, recipient = svm_accounts.users()[1], Account.create().address
    token = usdc(devnet, DESTINATION)
    quote = user_client.quote(from_svm(user, recipient, 30 * 10**6, (str(seeded.usdc_mint), token)))
    validate_against("quote", user_client.answered("/quote/v2"))
    before = token_balance(node.rpc_url, user.pubkey(), seeded.usdc_mint)
    succeeded(user_client.execute(quote, svm_wallet(user)))
    assert balance(devnet, DESTINATION, token, recipient) == quote.details.currency_out.amount
    assert token_balance(node.rpc_url, user.pubkey(), seeded.usdc_mint) == before - 30 * 10**6


def test_too_little_is_refunded_on_svm_with_the_reason(
    devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm], http: httpx.Client
) -> None:
    node, _seeded = svm_node
    user = svm_accounts.users()[2]
    quote = request_quote(http, from_svm(user, Account.create().address, 10**9).wire())
    before = sol_balance(node.rpc_url, user.pubkey())
    vault = svm_accounts.solver().pubkey()
    underpaid = programs.transfer_sol(user.pubkey(), vault, 10**8)
    sign_and_send(
        node.rpc_url, [underpaid, programs.memo(quote["protocol"]["v2"]["orderId"])], user
    )
    status = final_status(http, quote["steps"][0]["requestId"], until=REFUNDED)
    assert status["failReason"] == "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL"
    assert sol_balance(node.rpc_url, user.pubkey()) == before - FEE  # paid back in full


def test_wrong_mint_is_refunded_in_that_mint(
    devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm], http: httpx.Client
) -> None:
    node, seeded = svm_node
    user = svm_accounts.users()[3]
    quote = request_quote(http, from_svm(user, Account.create().address, 10**9).wire())
    before = token_balance(node.rpc_url, user.pubkey(), seeded.usdc_mint)
    pay = programs.transfer_token(
        user.pubkey(), svm_accounts.solver().pubkey(), seeded.usdc_mint, 10**9, 6
    )
    sign_and_send(node.rpc_url, [pay, programs.memo(quote["protocol"]["v2"]["orderId"])], user)
    status = final_status(http, quote["steps"][0]["requestId"], until=REFUNDED)
    assert status["failReason"] == "INCORRECT_DEPOSIT_CURRENCY"
    assert token_balance(node.rpc_url, user.pubkey(), seeded.usdc_mint) == before


def test_a_deposit_without_memo_is_refunded(
    svm_node: tuple[SvmNodeProcess, SeededSvm],
    svm_deployment: Deployment,
    start_service: StartService,
) -> None:
    node, _seeded = svm_node
    service = start_service(svm_deployment, run_workers=True)
    # What landed before the indexer's first scan is history: the transfer waits for it.
    watched = 1 + len(svm_chains(svm_deployment)[0].token_currencies)
    assert wait_for(
        lambda: (
            len(stored_rows(service, select(ChainCursor).where(ChainCursor.chain_id == SVM_ID)))
            == watched
        ),
        timeout=20,
    )
    user = svm_accounts.users()[4]
    before = sol_balance(node.rpc_url, user.pubkey())
    sign_and_send(
        node.rpc_url,
        [programs.transfer_sol(user.pubkey(), svm_accounts.solver().pubkey(), 10**9)],
        user,
    )
    assert wait_for(lambda: sol_balance(node.rpc_url, user.pubkey()) == before - FEE, timeout=30)


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"user": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}, "INVALID_ADDRESS"),
        ({"recipient": str(Keypair().pubkey())}, "INVALID_RECIPIENT"),
        ({"originCurrency": "0x0000000000000000000000000000000000000000"}, "UNSUPPORTED_CURRENCY"),
        ({"maxRouteLength": 0}, "INVALID_INPUT"),
    ],
)
def test_svm_origin_quotes_refuse_bad_input(
    http: httpx.Client, changes: dict[str, Any], code: str
) -> None:
    body = {
        **from_svm(svm_accounts.users()[0], Account.create().address, 10**9).wire(),
        **changes,
    }
    response = http.post("/quote/v2", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["errorCode"] == code


def test_a_deposit_landed_before_the_first_scan_is_filled(
    devnet: RunningDevnet,
    svm_node: tuple[SvmNodeProcess, SeededSvm],
    svm_deployment: Deployment,
    start_service: StartService,
    chain_urls: dict[int, str],
) -> None:
    """A new service's first scan of the vault puts history behind it, but not a deposit for
    a request it already quoted: here it is quoted and paid before any worker runs."""
    _node, seeded = svm_node
    user, recipient = svm_accounts.users()[4], Account.create().address
    token = usdc(devnet, DESTINATION)
    quoting = start_service(svm_deployment)
    with UserClient(quoting.base_url, chain_urls) as user_client:
        quote = user_client.quote(from_svm(user, recipient, 10**7, (str(seeded.usdc_mint), token)))
        # Paid, not followed: no worker would see it through.
        user_client.execute(quote, svm_wallet(user), options=SENT_ONLY)
    quoting.stop()
    service = start_service(svm_deployment, run_workers=True)
    with UserClient(service.base_url, chain_urls) as user_client:
        assert user_client.wait(quote.request_id).status is RequestStatus.SUCCESS
    assert balance(devnet, DESTINATION, token, recipient) == quote.details.currency_out.amount


def test_a_second_transfer_in_the_deposit_transaction_is_refunded(
    devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm], http: httpx.Client
) -> None:
    """Two transfers to the vault in one transaction: the quoted one fills, the other comes
    back (before: it was read as no deposit at all, kept by the vault)."""
    node, _seeded = svm_node
    user, recipient = svm_accounts.users()[2], Account.create().address
    quote = request_quote(http, from_svm(user, recipient, 10**9).wire())
    before = sol_balance(node.rpc_url, user.pubkey())
    vault = svm_accounts.solver().pubkey()
    extra = programs.transfer_sol(user.pubkey(), vault, 3 * 10**8)
    sign_and_send(node.rpc_url, [*item_instructions(quote["steps"][0]["items"][0]), extra], user)
    status = final_status(http, quote["steps"][0]["requestId"])
    assert status["status"] == "success", status
    assert balance(devnet, DESTINATION, NATIVE, recipient) == int(
        quote["details"]["currencyOut"]["amount"]
    )
    # The refund pays the extra back (its own transaction's fee is the vault's).
    assert wait_for(
        lambda: sol_balance(node.rpc_url, user.pubkey()) == before - 10**9 - FEE, timeout=30
    ), sol_balance(node.rpc_url, user.pubkey())
