"""Start the devnet exchange as a child process, wait until it answers, stop it for sure."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from crossfill.devnet.anvil import die_with_parent, free_port
from crossfill.errors import DevnetError

_START_ATTEMPTS = 5


@dataclass
class ExchangeProcess:
    host: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    state_path: Path

    @property
    def api_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, grace_seconds: float = 5.0) -> None:
        """SIGTERM, then SIGKILL if it does not exit within the grace period."""
        if not self.alive():
            return
        self.process.terminate()
        try:
            self.process.wait(grace_seconds)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _answers(api_url: str) -> bool:
    try:
        reply = httpx.post(f"{api_url}/info", json={"type": "spotMeta"}, timeout=1)
    except httpx.HTTPError:
        return False
    return reply.status_code == 200


def start_exchange(
    *,
    state_path: Path,
    log_dir: Path,
    exchange_chain: str = "Testnet",
    host: str = "127.0.0.1",
    ready_timeout: float = 20.0,
) -> ExchangeProcess:
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / "devnet-exchange.log"
    for _ in range(_START_ATTEMPTS):
        port = free_port(host)
        command = [
            sys.executable, "-m", "crossfill.devnet.exchange", "--host", host,
            "--port", str(port), "--state", str(state_path), "--chain", exchange_chain,
        ]  # fmt: skip
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=die_with_parent if os.name == "posix" else None,
            )
        exchange = ExchangeProcess(host, port, process, log_path, state_path)
        deadline = time.monotonic() + ready_timeout
        while exchange.alive() and time.monotonic() < deadline:
            if _answers(exchange.api_url):
                return exchange
            time.sleep(0.05)
        exchange.stop()
    raise DevnetError(f"the devnet exchange did not start; see {log_path}")


def fund(api_url: str, user: str, amount: str, token: str | None = None) -> None:
    """Credit `user`: perps USD, or the spot token named `token` (devnet only)."""
    body: dict[str, str] = {"user": user, "amount": amount}
    if token is not None:
        body["token"] = token
    reply = httpx.post(f"{api_url}/devnet/fund", json=body, timeout=10)
    if reply.status_code != 200 or reply.json().get("status") != "ok":
        raise DevnetError(f"funding {user} on the devnet exchange failed: {reply.text}")
