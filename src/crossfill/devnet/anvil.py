"""Anvil chains as devnet child processes, and the anvil-only RPC methods the devnet uses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from crossfill.contracts.toolchain import anvil_binary
from crossfill.devnet import json_rpc
from crossfill.devnet.child_process import (
    LOOPBACK,
    ChildProcess,
    answers_post,
    spawn,
    start_child,
)

# A chain is up once it answers a JSON-RPC call.
_READY_PROBE: dict[str, object] = {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []}


@dataclass(kw_only=True)
class AnvilProcess(ChildProcess):
    chain_id: int

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}"


def _launch(
    chain_id: int, port: int, hardfork: str, log_path: Path, block_time: float | None
) -> AnvilProcess:
    # anvil takes a sub-second block time only on its command line (evm_setIntervalMining
    # takes whole seconds).
    mining = [] if block_time is None else ["--block-time", str(block_time)]
    command = [
        str(anvil_binary()),
        "--host",
        LOOPBACK,
        "--port",
        str(port),
        "--chain-id",
        str(chain_id),
        "--hardfork",
        hardfork,
        "--silent",
        *mining,
    ]
    process = spawn(command, log_path)
    return AnvilProcess(
        chain_id=chain_id, host=LOOPBACK, port=port, process=process, log_path=log_path
    )


def start_anvil(
    chain_id: int, *, log_dir: Path, hardfork: str = "prague", block_time: float | None = None
) -> AnvilProcess:
    """Start one anvil chain: automining (interval mining is switched on after deployment),
    or mining a block every `block_time` seconds from the start."""
    log_path = log_dir / f"anvil-{chain_id}.log"
    return start_child(
        lambda port: _launch(chain_id, port, hardfork, log_path, block_time),
        lambda anvil: answers_post(anvil.rpc_url, _READY_PROBE),
        what=f"anvil for chain {chain_id}",
        log_path=log_path,
    )


def anvil_rpc(rpc_url: str, method: str, params: list[object]) -> object:
    """Call an anvil-specific method (anvil_*, evm_*); an RPC error raises DevnetError."""
    return json_rpc.call(rpc_url, method, params)


def set_interval_mining(rpc_url: str, block_time_seconds: int) -> None:
    """0 switches back to automine (a block per transaction)."""
    if block_time_seconds > 0:
        anvil_rpc(rpc_url, "evm_setIntervalMining", [block_time_seconds])
    else:
        anvil_rpc(rpc_url, "evm_setIntervalMining", [0])
        anvil_rpc(rpc_url, "evm_setAutomine", [True])


def set_native_balance(rpc_url: str, address: str, wei: int) -> None:
    anvil_rpc(rpc_url, "anvil_setBalance", [address, hex(wei)])
