"""Start the devnet SVM node as a child process, wait until it answers, stop it for sure."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from crossfill.devnet.anvil import die_with_parent, free_port
from crossfill.devnet.svm.ledger import BLOCKHASH_VALID_SLOTS
from crossfill.errors import DevnetError

_START_ATTEMPTS = 5


@dataclass
class SvmNodeProcess:
    host: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def rpc_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        # The next port, where @solana/web3.js looks by default.
        return f"ws://{self.host}:{self.port + 1}"

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


def _answers(rpc_url: str) -> bool:
    try:
        reply = httpx.post(
            rpc_url, json={"jsonrpc": "2.0", "id": 1, "method": "getHealth"}, timeout=1
        )
    except httpx.HTTPError:
        return False
    return reply.status_code == 200


def _launch(host: str, port: int, options: SvmNodeOptions, log_path: Path) -> SvmNodeProcess:
    command = [
        sys.executable, "-m", "crossfill.devnet.svm",
        "--host", host, "--port", str(port), "--slot-ms", str(options.slot_ms),
        "--blockhash-valid-slots", str(options.blockhash_valid_slots),
    ]  # fmt: skip
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent if os.name == "posix" else None,
        )
    return SvmNodeProcess(host, port, process, log_path)


@dataclass(frozen=True)
class SvmNodeOptions:
    slot_ms: int = 400
    blockhash_valid_slots: int = BLOCKHASH_VALID_SLOTS


def start_svm_node(
    *,
    log_dir: Path,
    options: SvmNodeOptions = SvmNodeOptions(),
    host: str = "127.0.0.1",
    ready_timeout: float = 20.0,
) -> SvmNodeProcess:
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / "svm-node.log"
    for _ in range(_START_ATTEMPTS):
        node = _launch(host, free_port(host), options, log_path)
        deadline = time.monotonic() + ready_timeout
        while node.alive() and time.monotonic() < deadline:
            if _answers(node.rpc_url):
                return node
            time.sleep(0.05)
        node.stop()
        # Exited early: most likely the port or the one after it was taken meanwhile.
    raise DevnetError(f"the SVM node did not start; see {log_path}")
