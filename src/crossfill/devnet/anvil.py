"""Anvil processes: start on a free loopback port, wait until they answer, stop for sure."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from crossfill.contracts.toolchain import anvil_binary
from crossfill.errors import DevnetError

_PR_SET_PDEATHSIG = 1
_START_ATTEMPTS = 5


def die_with_parent() -> None:
    """Runs in the child before exec: anvil gets SIGTERM if the devnet process dies (Linux)."""
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class AnvilProcess:
    chain_id: int
    host: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def rpc_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}"

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


def _rpc_answers(rpc_url: str) -> bool:
    try:
        reply = httpx.post(
            rpc_url,
            json={"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []},
            timeout=1,
        )
    except httpx.HTTPError:
        return False
    return reply.status_code == 200


def _launch(
    chain_id: int,
    host: str,
    port: int,
    hardfork: str,
    log_path: Path,
    block_time: float | None,
) -> AnvilProcess:
    # anvil takes a sub-second block time only on its command line (evm_setIntervalMining
    # takes whole seconds).
    mining = [] if block_time is None else ["--block-time", str(block_time)]
    command = [
        str(anvil_binary()),
        "--host",
        host,
        "--port",
        str(port),
        "--chain-id",
        str(chain_id),
        "--hardfork",
        hardfork,
        "--silent",
        *mining,
    ]
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent if os.name == "posix" else None,
        )
    return AnvilProcess(chain_id, host, port, process, log_path)


def start_anvil(
    chain_id: int,
    *,
    log_dir: Path,
    hardfork: str = "prague",
    host: str = "127.0.0.1",
    ready_timeout: float = 20.0,
    block_time: float | None = None,
) -> AnvilProcess:
    """Start one anvil chain: automining (interval mining is switched on after deployment),
    or mining a block every `block_time` seconds from the start."""
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"anvil-{chain_id}.log"
    for _ in range(_START_ATTEMPTS):
        anvil = _launch(chain_id, host, free_port(host), hardfork, log_path, block_time)
        deadline = time.monotonic() + ready_timeout
        while anvil.alive() and time.monotonic() < deadline:
            if _rpc_answers(anvil.rpc_url):
                return anvil
            time.sleep(0.05)
        anvil.stop()
        # Exited early: most likely another process took the port between probe and bind.
    raise DevnetError(f"anvil for chain {chain_id} did not start; see {log_path}")


def anvil_rpc(rpc_url: str, method: str, params: list[object]) -> object:
    """Call an anvil-specific method (anvil_*, evm_*); an RPC error raises DevnetError."""
    reply = httpx.post(
        rpc_url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, timeout=10
    ).json()
    if "error" in reply:
        raise DevnetError(f"{method} failed on {rpc_url}: {reply['error'].get('message')}")
    return reply.get("result")


def set_interval_mining(rpc_url: str, block_time_seconds: int) -> None:
    """0 switches back to automine (a block per transaction)."""
    if block_time_seconds > 0:
        anvil_rpc(rpc_url, "evm_setIntervalMining", [block_time_seconds])
    else:
        anvil_rpc(rpc_url, "evm_setIntervalMining", [0])
        anvil_rpc(rpc_url, "evm_setAutomine", [True])


def set_native_balance(rpc_url: str, address: str, wei: int) -> None:
    anvil_rpc(rpc_url, "anvil_setBalance", [address, hex(wei)])
