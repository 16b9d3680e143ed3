"""The official SDK's executeGaslessBatch, unchanged, bridges USDC for a user holding no ether.

The SDK sends `x-api-key` only to the original service's hosts, so its /execute call reaches
us without one: the operator lets keyless /execute calls from the test's address act as the
sponsored key (`CROSSFILL_KEYLESS_EXECUTE_KEY_ID`, `CROSSFILL_KEYLESS_EXECUTE_CLIENTS`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from ipaddress import ip_network
from pathlib import Path

import httpx
from sqlalchemy import select

from crossfill.contracts.toolchain import ARTIFACTS_DIR
from crossfill.devnet import accounts
from crossfill.store.tables import GaslessExecution
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    OPERATOR_TOKEN,
    ORIGIN,
    balance,
    published_statuses,
    stored_rows,
    usdc,
)
from tests.e2e.gasless import deploy_delegate, sponsored_key, user_with_usdc
from tests.support.service import StartService
from tests.support.waiting import wait_for

SCRIPT = Path(__file__).parent / "sdk" / "gasless_batch.mjs"
AMOUNT = 15_000_000


def test_sdk_gasless_batch_bridges_usdc_sponsored(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    service = start_service(
        run_workers=True,
        settings={
            "admin_token": OPERATOR_TOKEN,
            # The service's database is new: the key made below is its first, id 1.
            "keyless_execute_key_id": 1,
            "keyless_execute_clients": (ip_network("127.0.0.1/32"),),
        },
    )
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        key, key_id = sponsored_key(http, devnet)
    assert key_id == 1
    user = user_with_usdc(devnet, AMOUNT)
    delegate = deploy_delegate(devnet)
    node = shutil.which("node")
    assert node is not None, "node is required by the SDK test"
    arguments = {
        "baseApiUrl": service.base_url,
        "privateKey": "0x" + bytes(user.key).hex(),
        "apiKey": key,
        "delegate": delegate,
        "delegateAbiPath": str(ARTIFACTS_DIR / "BatchDelegate.json"),
        "originChainId": ORIGIN,
        "destinationChainId": DESTINATION,
        "originCurrency": usdc(devnet, ORIGIN),
        "destinationCurrency": usdc(devnet, DESTINATION),
        "amount": str(AMOUNT),
    }
    run = subprocess.run(
        [node, str(SCRIPT), json.dumps(arguments)],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-4000:]
    outcome = json.loads(run.stdout.strip().splitlines()[-1])

    request_id = outcome["requestId"]
    assert request_id == outcome["quotedRequestId"]
    assert outcome["progress"][-1] == "success"
    assert balance(devnet, ORIGIN, NATIVE, user.address) == 0
    assert balance(devnet, ORIGIN, usdc(devnet, ORIGIN), user.address) == 0
    received = balance(devnet, DESTINATION, usdc(devnet, DESTINATION), user.address)
    assert received == int(outcome["quotedOutput"])

    def execution() -> GaslessExecution:
        (row,) = stored_rows(
            service, select(GaslessExecution).where(GaslessExecution.request_id == request_id)
        )
        assert isinstance(row, GaslessExecution)
        return row

    # The fill may land before the executor's next tick records what the sponsor spent.
    assert wait_for(lambda: execution().state == "mined", timeout=10)
    settled = execution()
    assert (settled.api_key_id, settled.sponsor, settled.state) == (
        1,
        accounts.gas_sponsor().address.lower(),
        "mined",
    )
    assert published_statuses(service, request_id)[-1] == "success"
