"""The official SDK with the official SVM wallet adapter (@relayprotocol/relay-svm-wallet-adapter)
runs a withdrawal from the SVM chain and a deposit to it end to end against the devnet node."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
from eth_account import Account
from solders.keypair import Keypair

from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, NATIVE, ORIGIN, balance, funded_user
from tests.support.wallets.svm import sol_balance

SCRIPT = Path(__file__).parents[1] / "sdk" / "svm_bridge.mjs"
SVM_ID = 792703809
SOL = "1" * 32


def _run(arguments: dict[str, Any]) -> dict[str, Any]:
    node = shutil.which("node")
    assert node is not None, "node is required by the SDK test"
    run = subprocess.run(
        [node, str(SCRIPT), json.dumps(arguments)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-4000:]
    outcome: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    assert all(item["status"] == "complete" for step in outcome["steps"] for item in step["items"])
    assert outcome["checkStatuses"][-1] == "success"
    return outcome


def test_sdk_withdraws_sol_from_svm_to_eth(
    devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm], http: httpx.Client
) -> None:
    node, _seeded = svm_node
    user, recipient = svm_accounts.users()[0], Account.create().address
    outcome = _run(
        {
            "baseApiUrl": str(http.base_url).rstrip("/"),
            "svmRpcUrl": node.rpc_url,
            "svmSecretKey": list(bytes(user)),
            "originChainId": SVM_ID,
            "destinationChainId": DESTINATION,
            "originCurrency": SOL,
            "destinationCurrency": NATIVE,
            "amount": str(10**9),
            "recipient": recipient,
        }
    )
    assert SVM_ID in outcome["chainIds"]
    assert balance(devnet, DESTINATION, NATIVE, recipient) == int(outcome["quotedOutput"])


def test_sdk_deposits_eth_to_sol_on_svm(
    devnet: RunningDevnet, svm_node: tuple[SvmNodeProcess, SeededSvm], http: httpx.Client
) -> None:
    node, _seeded = svm_node
    user, recipient = funded_user(devnet), Keypair().pubkey()
    outcome = _run(
        {
            "baseApiUrl": str(http.base_url).rstrip("/"),
            "svmRpcUrl": node.rpc_url,
            "evmPrivateKey": "0x" + bytes(user.key).hex(),
            "originChainId": ORIGIN,
            "destinationChainId": SVM_ID,
            "originCurrency": NATIVE,
            "destinationCurrency": SOL,
            "amount": str(10**17),
            "recipient": str(recipient),
        }
    )
    assert sol_balance(node.rpc_url, recipient) == int(outcome["quotedOutput"])
