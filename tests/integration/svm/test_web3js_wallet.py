"""@solana/web3.js, as wallets use it, sends and confirms a transaction on the devnet node."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from solders.keypair import Keypair

from crossfill.devnet.svm import accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import USDC_PER_HOLDER, SeededSvm
from tests.support.wallets.svm import rpc

SCRIPT = Path(__file__).with_name("web3js_wallet.cjs")


def test_web3js_sends_and_confirms_through_the_websocket(
    svm_node: SvmNodeProcess, seeded: SeededSvm
) -> None:
    payer, recipient = accounts.users()[0], Keypair().pubkey()
    run = subprocess.run(
        ["node", str(SCRIPT), svm_node.rpc_url, json.dumps(list(bytes(payer))), str(recipient)],
        capture_output=True, text=True, timeout=60, cwd=Path(__file__).parents[3], check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    answer = json.loads(run.stdout)
    assert answer["confirmation"] in {"confirmed", "finalized"}
    assert answer["balance"] == 1_234_567
    assert answer["tokenAmounts"] == [str(USDC_PER_HOLDER)]
    assert answer["fee"] == 5000
    assert rpc(svm_node.rpc_url, "getBalance", str(recipient))["value"] == 1_234_567
