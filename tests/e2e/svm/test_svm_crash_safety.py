"""kill -9 the service while it pays SVM fills, restart it, and count on chain: every
recipient is paid exactly once (the journal of signed SVM transactions, written before
sending, is what the restarted service resumes from)."""

from __future__ import annotations

import contextlib
import sqlite3
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import tomli_w
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from crossfill.devnet.svm.deployment import svm_chain_document
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from tests.conftest import RunningDevnet
from tests.e2e.bridging import NATIVE, ORIGIN, deposit_native, funded_user, request_quote
from tests.e2e.conftest import wait_for
from tests.e2e.svm.wallet import sol_balance
from tests.e2e.test_crash_safety import ServiceProcess

SVM_ID = 792703809
ORDERS = 8
KILLS = 3


def _journalled(database: Path) -> int:
    if not database.exists():
        return 0
    with contextlib.closing(sqlite3.connect(database)) as db:
        try:
            (rows,) = db.execute("SELECT count(*) FROM svm_payments").fetchone()
        except sqlite3.OperationalError:  # not migrated yet
            return 0
    return int(rows)


def _grows(database: Path) -> Callable[[], bool]:
    """True once the journal has a row more than now."""
    before = _journalled(database)
    return lambda: _journalled(database) > before


def _landed_per_request(database: Path) -> dict[str, int]:
    with contextlib.closing(sqlite3.connect(database)) as db:
        rows = db.execute(
            "SELECT payment_key, count(*) FROM svm_payments WHERE status = 'landed' GROUP BY 1"
        ).fetchall()
    return {str(key): int(count) for key, count in rows}


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
    service = ServiceProcess(tmp_path, deployment_path)
    database = tmp_path / "crossfill.db"
    service.start()
    try:
        user = funded_user(devnet)
        owed: dict[str, tuple[str, int]] = {}
        quotes: list[dict[str, Any]] = []
        with httpx.Client(base_url=service.base_url, timeout=10) as http:
            for _ in range(ORDERS):
                recipient = str(Keypair().pubkey())
                body = {
                    "user": user.address, "originChainId": ORIGIN, "destinationChainId": SVM_ID,
                    "originCurrency": NATIVE, "destinationCurrency": "1" * 32,
                    "amount": str(10**16), "tradeType": "EXACT_INPUT", "recipient": recipient,
                }  # fmt: skip
                quote = request_quote(http, body)
                owed[quote["steps"][0]["requestId"]] = (
                    recipient, int(quote["details"]["currencyOut"]["amount"]),
                )  # fmt: skip
                quotes.append(quote)
        # Paid while the service is down, the deposits are all found at once when it is back:
        # the payments then start after the restart, where the kills below can fall on them.
        service.kill()
        for quote in quotes:
            deposit_native(devnet, user, quote, 10**16)
        service.start()
        interrupted = 0
        for _ in range(KILLS):
            wait_for(_grows(database), timeout=30, interval=0.02)
            if sum(_landed_per_request(database).values()) == ORDERS:
                break  # all paid: a later kill would test nothing
            interrupted += 1
            service.kill()
            service.start()
        # How many kills fall mid-payment depends on the machine's speed; one is the test.
        assert interrupted >= 1

        def all_paid() -> bool:
            return all(
                sol_balance(node.rpc_url, Pubkey.from_string(r)) >= amount
                for r, amount in owed.values()
            )

        assert wait_for(all_paid, timeout=90, interval=0.5)
        for recipient, amount in owed.values():
            assert sol_balance(node.rpc_url, Pubkey.from_string(recipient)) == amount
        assert _landed_per_request(database) == dict.fromkeys(owed, 1)
    finally:
        service.stop()
