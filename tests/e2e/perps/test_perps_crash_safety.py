"""kill -9 the service while it pays deposits to the perps exchange, restart it, and count on
the exchange: every recipient is credited exactly once (the journal of signed actions, written
before posting, is what the restarted service re-posts; the exchange takes a nonce once)."""

from __future__ import annotations

import tomllib
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import tomli_w
from eth_account import Account

from crossfill.devnet.exchange.deployment import perps_document
from crossfill.devnet.exchange.process import ExchangeProcess
from tests.conftest import RunningDevnet
from tests.e2e.bridging import NATIVE, ORIGIN, funded_user
from tests.e2e.payment_crashes import (
    PaymentJournal,
    kill_while_paying,
    quote_then_deposit_while_down,
)
from tests.e2e.perps.conftest import PERPS_ID, PERPS_USDC, ledger, withdrawable
from tests.support.service import ServiceProcess, service_settings
from tests.support.waiting import wait_for

ORDERS = 8
KILLS = 3


def test_kill_9_while_paying_exchange_deposits_credits_each_once(
    devnet: RunningDevnet, exchange: ExchangeProcess, tmp_path: Path
) -> None:
    document: dict[str, Any] = tomllib.loads(devnet.deployment_path.read_text())
    document["perps"] = perps_document(api_url=exchange.api_url)
    deployment_path = tmp_path / "deployment.toml"
    deployment_path.write_text(tomli_w.dumps(document))
    service = ServiceProcess(service_settings(tmp_path, deployment_path))
    journal = PaymentJournal(tmp_path / "crossfill.db", "perps_payments", "credited")
    service.start()
    try:
        user = funded_user(devnet)
        bodies = [
            {
                "user": user.address,
                "originChainId": ORIGIN,
                "destinationChainId": PERPS_ID,
                "originCurrency": NATIVE,
                "destinationCurrency": PERPS_USDC,
                "amount": str(10**16),
                "tradeType": "EXACT_INPUT",
                "recipient": Account.create().address,
            }
            for _ in range(ORDERS)
        ]
        owed = quote_then_deposit_while_down(devnet, service, user, bodies, 10**16)
        kill_while_paying(service, journal, ORDERS, KILLS)

        def all_credited() -> bool:
            return all(
                withdrawable(exchange, o.recipient) >= Decimal(o.amount) / 10**6
                for o in owed.values()
            )

        assert wait_for(all_credited, timeout=90, interval=0.5), (
            f"{journal.describe(list(owed))}\nservice log:\n{service.log_tail()}"
        )
        for o in owed.values():
            assert withdrawable(exchange, o.recipient) == Decimal(o.amount) / 10**6
            assert len(ledger(exchange, o.recipient)) == 1
        # Each paid once; the journal marks a payment landed once it has seen it land, which
        # may be after the recipient's balance shows it.
        assert journal.settles_to(dict.fromkeys(owed, 1)), journal.describe(list(owed))
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
