"""kill -9 the service while it pays deposits to the perps exchange, restart it, and count on
the exchange: every recipient is credited exactly once (the journal of signed actions, written
before posting, is what the restarted service re-posts; the exchange takes a nonce once)."""

from __future__ import annotations

import contextlib
import sqlite3
import tomllib
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import tomli_w
from eth_account import Account

from crossfill.devnet.exchange.deployment import perps_document
from crossfill.devnet.exchange.process import ExchangeProcess
from tests.conftest import RunningDevnet
from tests.e2e.bridging import NATIVE, ORIGIN, deposit_native, funded_user, request_quote
from tests.e2e.conftest import wait_for
from tests.e2e.perps.conftest import PERPS_ID, PERPS_USDC, ledger, withdrawable
from tests.e2e.test_crash_safety import ServiceProcess

ORDERS = 8
KILLS = 3


def _journalled(database: Path) -> int:
    if not database.exists():
        return 0
    with contextlib.closing(sqlite3.connect(database)) as db:
        try:
            (rows,) = db.execute("SELECT count(*) FROM perps_payments").fetchone()
        except sqlite3.OperationalError:  # not migrated yet
            return 0
    return int(rows)


def _grows(database: Path) -> Callable[[], bool]:
    before = _journalled(database)
    return lambda: _journalled(database) > before


def _credited_per_request(database: Path) -> dict[str, int]:
    with contextlib.closing(sqlite3.connect(database)) as db:
        rows = db.execute(
            "SELECT payment_key, count(*) FROM perps_payments WHERE status = 'credited' GROUP BY 1"
        ).fetchall()
    return {str(key): int(count) for key, count in rows}


def test_kill_9_while_paying_exchange_deposits_credits_each_once(
    devnet: RunningDevnet, exchange: ExchangeProcess, tmp_path: Path
) -> None:
    document: dict[str, Any] = tomllib.loads(devnet.deployment_path.read_text())
    document["perps"] = perps_document(api_url=exchange.api_url)
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
                recipient = Account.create().address
                body = {
                    "user": user.address, "originChainId": ORIGIN, "destinationChainId": PERPS_ID,
                    "originCurrency": NATIVE, "destinationCurrency": PERPS_USDC,
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
            if sum(_credited_per_request(database).values()) == ORDERS:
                break  # all paid: a later kill would test nothing
            interrupted += 1
            service.kill()
            service.start()
        # How many kills fall mid-payment depends on the machine's speed; one is the test.
        assert interrupted >= 1

        def all_credited() -> bool:
            return all(
                withdrawable(exchange, recipient) >= Decimal(amount) / 10**6
                for recipient, amount in owed.values()
            )

        assert wait_for(all_credited, timeout=90, interval=0.5)
        for recipient, amount in owed.values():
            assert withdrawable(exchange, recipient) == Decimal(amount) / 10**6
            assert len(ledger(exchange, recipient)) == 1
        assert _credited_per_request(database) == dict.fromkeys(owed, 1)
        with httpx.Client(base_url=service.base_url, timeout=10) as http:

            def all_succeeded() -> bool:
                return all(
                    http.get("/intents/status/v3", params={"requestId": rid}).json()["status"]
                    == "success"
                    for rid in owed
                )

            assert wait_for(all_succeeded, timeout=30, interval=0.5)
    finally:
        service.stop()
