"""The devnet exchange in-process (its Starlette app over a SQLite file in tmp_path, on a
clock the test holds), and clients that sign as the exchange's own SDK does."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from eth_account.signers.local import LocalAccount
from hyperliquid.utils import signing as sdk

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


def sdk_usd_send(wallet: LocalAccount, destination: str, amount: str, nonce: int) -> dict[str, Any]:
    """`POST /exchange`'s body for a usdSend signed by the exchange's own SDK (testnet)."""
    action = {"destination": destination, "amount": amount, "time": nonce, "type": "usdSend"}
    signature = sdk.sign_usd_transfer_action(wallet, action, False)
    return {"action": action, "nonce": nonce, "signature": signature, "vaultAddress": None,
            "expiresAfter": None}  # fmt: skip


def sdk_send_asset(
    wallet: LocalAccount, destination: str, amount: str, nonce: int, *, source_dex: str = "",
    destination_dex: str = "", token: str = "USDC:0x6d1e7cde53ba9467b783cb7c530ce054",
) -> dict[str, Any]:  # fmt: skip
    action = {
        "type": "sendAsset", "destination": destination, "sourceDex": source_dex,
        "destinationDex": destination_dex, "token": token, "amount": amount,
        "fromSubAccount": "", "nonce": nonce,
    }  # fmt: skip
    signature = sdk.sign_send_asset_action(wallet, action, False)
    return {"action": action, "nonce": nonce, "signature": signature, "vaultAddress": None,
            "expiresAfter": None}  # fmt: skip


def sdk_spot_send(
    wallet: LocalAccount, destination: str, amount: str, token: str, nonce: int
) -> dict[str, Any]:
    action = {"destination": destination, "amount": amount, "token": token, "time": nonce,
              "type": "spotSend"}  # fmt: skip
    signature = sdk.sign_spot_transfer_action(wallet, action, False)
    return {"action": action, "nonce": nonce, "signature": signature, "vaultAddress": None,
            "expiresAfter": None}  # fmt: skip
