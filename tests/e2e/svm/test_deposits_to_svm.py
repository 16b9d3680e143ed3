"""Bridging to the SVM chain end to end: a deposit on an EVM chain, the solver paying the SVM
recipient from its vault (SOL, and USDC into a token account it creates), balances checked on
both chains; and the quote's address and size rules for SVM routes."""

from __future__ import annotations

import httpx
import pytest
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from crossfill.kinds.svm import programs
from tests.conftest import RunningDevnet
from tests.e2e.bridging import NATIVE, ORIGIN, balance, funded_user, usdc
from tests.e2e.svm.routes import SOL, to_svm
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.e2e.wire import validate_against
from tests.support.wallets.svm import rpc


def test_eth_to_sol_pays_the_recipient_from_the_vault(
    devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm], user_client: UserClient
) -> None:
    node, _seeded = svm_node
    user, recipient = funded_user(devnet), Keypair().pubkey()
    quote = user_client.quote(to_svm(user.address, str(recipient), (NATIVE, SOL), 10**17))
    validate_against("quote", user_client.answered("/quote/v2"))
    amount_out = quote.details.currency_out.amount
    assert quote.details.recipient == str(recipient)  # base58, exactly
    assert amount_out > 0
    before = balance(devnet, ORIGIN, NATIVE, user.address)
    succeeded(user_client.execute(quote, evm_wallet(user)))
    assert rpc(node.rpc_url, "getBalance", str(recipient))["value"] == amount_out
    assert before - balance(devnet, ORIGIN, NATIVE, user.address) >= 10**17


def test_usdc_to_svm_usdc_creates_the_token_account(
    devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm], user_client: UserClient
) -> None:
    node, seeded = svm_node
    user, recipient = funded_user(devnet, usdc_amount=50 * 10**6), Keypair().pubkey()
    currencies = (usdc(devnet, ORIGIN), str(seeded.usdc_mint))
    request = to_svm(user.address, str(recipient), currencies, 20 * 10**6)
    quote = user_client.quote(request)
    validate_against("quote", user_client.answered("/quote/v2"))
    amount_out = quote.details.currency_out.amount
    vault_before = _token_balance(node, svm_accounts.solver().pubkey(), seeded.usdc_mint)
    succeeded(user_client.execute(quote, evm_wallet(user)))
    assert _token_balance(node, recipient, seeded.usdc_mint) == amount_out
    assert (
        _token_balance(node, svm_accounts.solver().pubkey(), seeded.usdc_mint)
        == vault_before - amount_out
    )
    assert balance(devnet, ORIGIN, usdc(devnet, ORIGIN), user.address) == 30 * 10**6


def _token_balance(node: SvmNodeProcess, owner: Pubkey, mint: Pubkey) -> int:
    account = programs.token_account(owner, mint)
    reply = httpx.post(
        node.rpc_url,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "getTokenAccountBalance",
            "params": [str(account)],
        },
    ).json()
    return int(reply["result"]["value"]["amount"]) if "result" in reply else 0


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"recipient": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}, "INVALID_RECIPIENT"),
        (
            {"recipient": "EPjFWdd5AufqSSqeM2qACdYv6nQXBZkkk4Ht7dAJ2B8Q".lower()},
            "INVALID_RECIPIENT",
        ),
        ({"user": "EPjFWdd5AufqSSqeM2qACdYv6nQXBZkkk4Ht7dAJ2B8Q"}, "INVALID_ADDRESS"),
        (
            {"destinationCurrency": "0x0000000000000000000000000000000000000000"},
            "UNSUPPORTED_CURRENCY",
        ),
        (
            {"destinationCurrency": "So11111111111111111111111111111111111111112"},
            "UNSUPPORTED_CURRENCY",
        ),
    ],
)
def test_svm_routes_refuse_the_other_vms_addresses(
    http: httpx.Client, changes: dict[str, str], code: str
) -> None:
    body = {
        **to_svm(
            "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
            str(Keypair().pubkey()),
            (NATIVE, SOL),
            10**16,
        ).wire(),
        **changes,
    }
    response = http.post("/quote/v2", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["errorCode"] == code
