"""`depositFeePayer` on the devnet SVM node: another account pays the SVM deposit's fee and
signs it; the user pays exactly the deposit, and the request is filled on the EVM chain."""

from __future__ import annotations

import httpx
import pytest
from eth_account import Account
from solders.errors import SignerError
from solders.keypair import Keypair

from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, NATIVE, balance, final_status, request_quote
from tests.e2e.conftest import validate_against
from tests.support.wallets.svm import airdrop, item_instructions, sign_and_send, sol_balance

SVM_ID = 792703809
SOL = "1" * 32
FEE = 5000  # lamports per signature
AMOUNT = 10**9


def _body(user: Keypair, **more: str) -> dict[str, str | int]:
    return {
        "user": str(user.pubkey()), "originChainId": SVM_ID, "destinationChainId": DESTINATION,
        "originCurrency": SOL, "destinationCurrency": NATIVE, "amount": str(AMOUNT),
        "tradeType": "EXACT_INPUT", "recipient": Account.create().address, **more,
    }  # fmt: skip


def test_the_fee_payer_pays_the_fee_and_the_user_only_the_deposit(
    devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm], http: httpx.Client
) -> None:
    node, _seeded = svm_node
    user, payer = Keypair(), Keypair()
    airdrop(node.rpc_url, user.pubkey(), 2 * AMOUNT)
    airdrop(node.rpc_url, payer.pubkey(), 10**8)
    body = _body(user, depositFeePayer=str(payer.pubkey()))
    quote = request_quote(http, body)
    item = quote["steps"][0]["items"][0]
    assert item["data"]["feePayer"] == str(payer.pubkey())
    instructions = item_instructions(item)
    user_before = sol_balance(node.rpc_url, user.pubkey())
    payer_before = sol_balance(node.rpc_url, payer.pubkey())
    with pytest.raises(SignerError, match="not enough signers"):  # the payer must sign too
        sign_and_send(node.rpc_url, instructions, user)
    sign_and_send(node.rpc_url, instructions, user, fee_payer=payer)
    status = final_status(http, quote["steps"][0]["requestId"])
    assert status["status"] == "success", status
    assert sol_balance(node.rpc_url, user.pubkey()) == user_before - AMOUNT
    assert sol_balance(node.rpc_url, payer.pubkey()) == payer_before - 2 * FEE
    assert balance(devnet, DESTINATION, NATIVE, str(body["recipient"])) == int(
        quote["details"]["currencyOut"]["amount"]
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
    refused = http.post("/quote/v2", json=_body(Keypair(), **body))
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
