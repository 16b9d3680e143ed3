"""The devnet exchange in-process (its Starlette app over a SQLite file in tmp_path, on a
clock the test holds). (Clients that sign as the exchange's own SDK does:
`tests.support.wallets.perps`.)"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from crossfill.devnet.child_process import free_port
from crossfill.devnet.exchange.actions import Exchange
from crossfill.devnet.exchange.ledger import ExchangeLedger, Leg
from crossfill.devnet.exchange.server import build_app
from crossfill.devnet.exchange.tokens import LEDGER_DECIMALS, PERPS_DEX, USDC
from tests.support.waiting import wait_for

NOW_MS = 1_763_900_000_000


@dataclass
class Clock:
    now_ms: int = NOW_MS

    def __call__(self) -> float:
        return self.now_ms / 1000


@dataclass
class DevnetExchange:
    http: httpx.Client
    ledger: ExchangeLedger
    clock: Clock
    state_path: Path

    def fund_usd(self, user: str, usd: int) -> None:
        self.ledger.credit(user, Leg(PERPS_DEX, USDC.name, usd * 10**LEDGER_DECIMALS))

    def post(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = self.http.post("/exchange", json=body)
        assert reply.status_code == 200, reply.text
        answer: dict[str, Any] = reply.json()
        return answer

    def info(self, **body: Any) -> Any:
        reply = self.http.post("/info", json=body)
        assert reply.status_code == 200, reply.text
        return reply.json()

    def withdrawable(self, user: str) -> str:
        return str(self.info(type="clearinghouseState", user=user)["withdrawable"])


@pytest.fixture
def exchange(tmp_path: Path) -> Iterator[DevnetExchange]:
    """The exchange's app under uvicorn in a thread, on a loopback port."""
    ledger = ExchangeLedger(tmp_path / "exchange.sqlite3")
    clock = Clock()
    port = free_port()
    app = build_app(Exchange(ledger, "Testnet"), clock=clock)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="off", log_config=None)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    assert wait_for(lambda: server.started, timeout=10), "the exchange did not start"
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            yield DevnetExchange(http, ledger, clock, tmp_path / "exchange.sqlite3")
    finally:
        server.should_exit = True
        thread.join(10)
        ledger.close()
