"""The devnet exchange as a devnet child process, and funding its accounts."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import httpx

from crossfill.devnet.child_process import (
    LOOPBACK,
    ChildProcess,
    answers_post,
    spawn,
    start_child,
)
from crossfill.errors import DevnetError

_READY_PROBE: dict[str, object] = {"type": "spotMeta"}


@dataclass(kw_only=True)
class ExchangeProcess(ChildProcess):
    state_path: Path

    @property
    def api_url(self) -> str:
        return self.rpc_url


def start_exchange(
    *, state_path: Path, log_dir: Path, exchange_chain: str = "Testnet"
) -> ExchangeProcess:
    log_path = log_dir / "devnet-exchange.log"

    def launch(port: int) -> ExchangeProcess:
        command = [
            sys.executable, "-m", "crossfill.devnet.exchange", "--host", LOOPBACK,
            "--port", str(port), "--state", str(state_path), "--chain", exchange_chain,
        ]  # fmt: skip
        process = spawn(command, log_path)
        return ExchangeProcess(
            host=LOOPBACK, port=port, process=process, log_path=log_path, state_path=state_path
        )

    return start_child(
        launch,
        lambda exchange: answers_post(f"{exchange.api_url}/info", _READY_PROBE),
        what="the devnet exchange",
        log_path=log_path,
    )


def fund(api_url: str, user: str, amount: str, token: str | None = None) -> None:
    """Credit `user`: perps USD, or the spot token named `token` (devnet only)."""
    body: dict[str, str] = {"user": user, "amount": amount}
    if token is not None:
        body["token"] = token
    reply = httpx.post(f"{api_url}/devnet/fund", json=body, timeout=10)
    if reply.status_code != 200 or reply.json().get("status") != "ok":
        raise DevnetError(f"funding {user} on the devnet exchange failed: {reply.text}")
