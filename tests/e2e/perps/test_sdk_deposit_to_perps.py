"""The official TypeScript SDK, unchanged, deposits to the perps exchange: it reads 1337 from
our `/chains`, runs the EVM deposit steps, and polls until the exchange credit is `success`."""

from __future__ import annotations

import json
import shutil
import subprocess
from decimal import Decimal
from typing import Any

from crossfill.contracts.toolchain import node_modules_dir
from crossfill.devnet.exchange.process import ExchangeProcess
from tests.conftest import RunningDevnet
from tests.e2e.bridging import ORIGIN, balance, funded_user, usdc
from tests.e2e.perps.conftest import PERPS_ID, PERPS_USDC, ledger, withdrawable
from tests.e2e.test_sdk import SCRIPT
from tests.support.service import ServiceThread


def test_sdk_deposits_usdc_to_the_exchange(
    devnet: RunningDevnet, exchange: ExchangeProcess, perps_service: ServiceThread
) -> None:
    node = shutil.which("node")
    assert node is not None, "node is required by the SDK test"
    assert (node_modules_dir() / "@relayprotocol" / "relay-sdk").is_dir()
    user = funded_user(devnet, usdc_amount=100 * 10**6)
    arguments: dict[str, Any] = {
        "baseApiUrl": perps_service.base_url,
        "privateKey": "0x" + bytes(user.key).hex(),
        "originChainId": ORIGIN, "destinationChainId": PERPS_ID,
        "originCurrency": usdc(devnet, ORIGIN), "destinationCurrency": PERPS_USDC,
        "amount": str(25 * 10**6), "tradeType": "EXACT_INPUT",
    }  # fmt: skip
    run = subprocess.run(
        [node, str(SCRIPT), json.dumps(arguments)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-4000:]
    outcome: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    assert PERPS_ID in outcome["chainIds"]
    assert outcome["stepIds"] == ["approve", "deposit"]
    assert outcome["checkStatuses"][-1] == "success"
    (entry,) = ledger(exchange, user.address)  # the wallet's own exchange account
    (fill,) = outcome["steps"][-1]["items"][0]["txHashes"]
    assert fill["txHash"] == entry["hash"] and fill["chainId"] == PERPS_ID
    assert withdrawable(exchange, user.address) == Decimal(outcome["quotedOutput"]) / 10**6
    assert balance(devnet, ORIGIN, usdc(devnet, ORIGIN), user.address) == 75 * 10**6
