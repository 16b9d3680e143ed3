"""kill -9 the service while it pays SVM fills, restart it, and count on chain: every
recipient is paid exactly once (the journal of signed SVM transactions, written before
sending, is what the restarted service resumes from)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import tomli_w
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from crossfill.devnet.svm.deployment import svm_chain_document
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from tests.conftest import RunningDevnet
from tests.e2e.bridging import NATIVE, ORIGIN, funded_user
from tests.e2e.payment_crashes import (
    PaymentJournal,
    kill_while_paying,
    quote_then_deposit_while_down,
)
from tests.support.service import ServiceProcess, service_settings
from tests.support.waiting import wait_for
from tests.support.wallets.svm import sol_balance

SVM_ID = 792703809
ORDERS = 8
KILLS = 3


def test_kill_9_while_paying_svm_fills_pays_each_once(
    devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm], tmp_path: Path
) -> None:
    node, seeded = svm_node
    document: dict[str, Any] = tomllib.loads(devnet.deployment_path.read_text())
    document["svm_chains"] = [
        svm_chain_document(rpc_url=node.rpc_url, ws_url=node.ws_url, seeded=seeded)
    ]
    deployment_path = tmp_path / "deployment.toml"
    deployment_path.write_text(tomli_w.dumps(document))
    service = ServiceProcess(service_settings(tmp_path, deployment_path))
    journal = PaymentJournal(tmp_path / "crossfill.db", "svm_payments", "landed")
    service.start()
    try:
        user = funded_user(devnet)
        bodies = [
            {
                "user": user.address,
                "originChainId": ORIGIN,
                "destinationChainId": SVM_ID,
                "originCurrency": NATIVE,
                "destinationCurrency": "1" * 32,
                "amount": str(10**16),
                "tradeType": "EXACT_INPUT",
                "recipient": str(Keypair().pubkey()),
            }
            for _ in range(ORDERS)
        ]
        owed = quote_then_deposit_while_down(devnet, service, user, bodies, 10**16)
        kill_while_paying(service, journal, ORDERS, KILLS)

        def all_paid() -> bool:
            return all(
                sol_balance(node.rpc_url, Pubkey.from_string(o.recipient)) >= o.amount
                for o in owed.values()
            )

        assert wait_for(all_paid, timeout=90, interval=0.5), (
            f"{journal.describe(list(owed))}\nservice log:\n{service.log_tail()}"
        )
        for o in owed.values():
            assert sol_balance(node.rpc_url, Pubkey.from_string(o.recipient)) == o.amount
        # Each paid once; the journal marks a payment landed once it has seen it land, which
        # may be after the recipient's balance shows it.
        assert journal.settles_to(dict.fromkeys(owed, 1)), journal.describe(list(owed))
    finally:
        service.stop()
