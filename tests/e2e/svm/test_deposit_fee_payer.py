"""`depositFeePayer` on the devnet SVM node: another account pays the SVM deposit's fee and
signs it; the user pays exactly the deposit, and the request is filled on the EVM chain."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from eth_account import Account
from solders.keypair import Keypair

from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from crossfill_client import ExecutionError, QuoteRequest, Signer
from crossfill_client.models import SvmTransactionData
from crossfill_client.signing import SvmWallet
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, NATIVE, balance
from tests.e2e.svm.routes import SOL, from_svm
from tests.e2e.user_client import UserClient, succeeded, svm_wallet
from tests.e2e.wire import validate_against
from tests.support.wallets.svm import airdrop, sol_balance

SVM_ID = 792703809
FEE = 5000  # lamports per signature
AMOUNT = 10**9


def _request(user: Keypair, **more: Any) -> QuoteRequest:
    return from_svm(user, Account.create().address, AMOUNT, **more)


def test_the_fee_payer_pays_the_fee_and_the_user_only_the_deposit(
    devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm], user_client: UserClient
) -> None:
    node, _seeded = svm_node
    user, payer = Keypair(), Keypair()
    airdrop(node.rpc_url, user.pubkey(), 2 * AMOUNT)
    airdrop(node.rpc_url, payer.pubkey(), 10**8)
    request = _request(user, deposit_fee_payer=str(payer.pubkey()))
    quote = user_client.quote(request)
    item = quote.steps[0].items[0].data
    assert isinstance(item, SvmTransactionData) and item.fee_payer == str(payer.pubkey())
    user_before = sol_balance(node.rpc_url, user.pubkey())
    payer_before = sol_balance(node.rpc_url, payer.pubkey())
    # The payer must sign too: the user's wallet alone cannot sign the transaction.
    with pytest.raises(ExecutionError, match=str(payer.pubkey())):
        user_client.execute(quote, svm_wallet(user))
    succeeded(user_client.execute(quote, Signer(svm=SvmWallet(user, fee_payer=payer))))
    assert sol_balance(node.rpc_url, user.pubkey()) == user_before - AMOUNT
    assert sol_balance(node.rpc_url, payer.pubkey()) == payer_before - 2 * FEE
    assert request.recipient is not None
    assert (
        balance(devnet, DESTINATION, NATIVE, request.recipient) == quote.details.currency_out.amount
    )


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"depositFeePayer": "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"}, "INVALID_ADDRESS"),
        ({"depositFeePayer": "1" * 31}, "INVALID_ADDRESS"),
    ],
)
def test_a_fee_payer_that_is_no_svm_address_is_refused(
    http: httpx.Client, body: dict[str, str], code: str
) -> None:
    refused = http.post("/quote/v2", json=_request(Keypair(), **body).wire())
    assert refused.status_code == 400, refused.text
    assert refused.json()["errorCode"] == code
    assert "depositFeePayer" in refused.json()["message"]
    validate_against("quote-error", refused.json())


def test_a_fee_payer_for_a_deposit_on_an_evm_chain_is_refused(http: httpx.Client) -> None:
    body = {
        "user": Account.create().address, "originChainId": DESTINATION,
        "destinationChainId": SVM_ID, "originCurrency": NATIVE, "destinationCurrency": SOL,
        "amount": str(10**16), "tradeType": "EXACT_INPUT", "recipient": str(Keypair().pubkey()),
        "depositFeePayer": str(Keypair().pubkey()),
    }  # fmt: skip
    refused = http.post("/quote/v2", json=body)
    assert refused.status_code == 400, refused.text
    assert refused.json()["errorCode"] == "UNSUPPORTED_EXECUTION_TYPE"
    assert "depositFeePayer" in refused.json()["message"]
