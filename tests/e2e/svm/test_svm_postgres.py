"""Both SVM directions on PostgreSQL: the SVM journal, cursors and signatures in its columns."""

from __future__ import annotations

import httpx
from eth_account import Account
from solders.keypair import Keypair

from crossfill.config import Deployment
from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    balance,
    deposit_native,
    final_status,
    funded_user,
    request_quote,
)
from tests.support.service import StartService
from tests.support.wallets.svm import item_instructions, sign_and_send, sol_balance

SVM_ID = 792703809
SOL = "1" * 32


def test_to_and_from_svm_on_postgresql(
    devnet: RunningDevnet,
    svm_node: tuple[SvmNodeProcess, SeededSvm],
    svm_deployment: Deployment,
    start_service: StartService,
    postgres_url: str,
) -> None:
    node, _seeded = svm_node
    service = start_service(
        svm_deployment, run_workers=True, settings={"database_url": postgres_url}
    )
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        user, svm_recipient = funded_user(devnet), Keypair().pubkey()
        to_svm = request_quote(http, {
            "user": user.address, "originChainId": ORIGIN, "destinationChainId": SVM_ID,
            "originCurrency": NATIVE, "destinationCurrency": SOL, "amount": str(10**17),
            "tradeType": "EXACT_INPUT", "recipient": str(svm_recipient),
        })  # fmt: skip
        deposit_native(devnet, user, to_svm, 10**17)
        assert final_status(http, to_svm["steps"][0]["requestId"])["status"] == "success"
        assert sol_balance(node.rpc_url, svm_recipient) == int(
            to_svm["details"]["currencyOut"]["amount"]
        )

        svm_user, evm_recipient = svm_accounts.users()[3], Account.create().address
        from_svm = request_quote(http, {
            "user": str(svm_user.pubkey()), "originChainId": SVM_ID,
            "destinationChainId": DESTINATION,
            "originCurrency": SOL, "destinationCurrency": NATIVE, "amount": str(10**9),
            "tradeType": "EXACT_INPUT", "recipient": evm_recipient,
        })  # fmt: skip
        sign_and_send(node.rpc_url, item_instructions(from_svm["steps"][0]["items"][0]), svm_user)
        status = final_status(http, from_svm["steps"][0]["requestId"])
        assert status["status"] == "success", status
        assert balance(devnet, DESTINATION, NATIVE, evm_recipient) == int(
            from_svm["details"]["currencyOut"]["amount"]
        )
