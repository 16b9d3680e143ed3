"""The devnet SVM node as a devnet child process."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from crossfill.devnet.child_process import (
    LOOPBACK,
    ChildProcess,
    answers_post,
    spawn,
    start_child,
)
from crossfill.devnet.svm.ledger import BLOCKHASH_VALID_SLOTS

_READY_PROBE: dict[str, object] = {"jsonrpc": "2.0", "id": 1, "method": "getHealth"}


@dataclass(kw_only=True)
class SvmNodeProcess(ChildProcess):
    @property
    def ws_url(self) -> str:
        # The next port, where @solana/web3.js looks by default.
        return f"ws://{self.host}:{self.port + 1}"


def _launch(port: int, options: SvmNodeOptions, log_path: Path) -> SvmNodeProcess:
    command = [
        sys.executable, "-m", "crossfill.devnet.svm",
        "--host", LOOPBACK, "--port", str(port), "--slot-ms", str(options.slot_ms),
        "--blockhash-valid-slots", str(options.blockhash_valid_slots),
    ]  # fmt: skip
    process = spawn(command, log_path)
    return SvmNodeProcess(host=LOOPBACK, port=port, process=process, log_path=log_path)


@dataclass(frozen=True)
class SvmNodeOptions:
    slot_ms: int = 400
    blockhash_valid_slots: int = BLOCKHASH_VALID_SLOTS


def start_svm_node(*, log_dir: Path, options: SvmNodeOptions = SvmNodeOptions()) -> SvmNodeProcess:
    log_path = log_dir / "svm-node.log"
    return start_child(
        lambda port: _launch(port, options, log_path),
        lambda node: answers_post(node.rpc_url, _READY_PROBE),
        what="the SVM node",
        log_path=log_path,
    )
