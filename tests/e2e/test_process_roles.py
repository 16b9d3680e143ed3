"""`crossfill run --workers-only` beside an API-only process on one PostgreSQL: the API
answers, the hint it forwards reaches the workers, the bridge completes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    ORIGIN,
    final_status,
    funded_user,
    native_bridge,
    request_quote,
    rpc_urls,
)
from tests.e2e.conftest import StartService
from tests.e2e.service_process import ServiceProcess
from tests.e2e.wallet import execute_steps


def test_workers_only_beside_an_api_process_complete_a_bridge(
    start_service: StartService, devnet: RunningDevnet, postgres_url: str, tmp_path: Path
) -> None:
    api = start_service(run_workers=False, settings={"database_url": postgres_url})
    workers = ServiceProcess(tmp_path, devnet.deployment_path)
    workers.env["CROSSFILL_DATABASE_URL"] = postgres_url
    process = subprocess.Popen(
        [sys.executable, "-m", "crossfill", "run", "--workers-only"],
        env=workers.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        user = funded_user(devnet)
        with httpx.Client(base_url=api.base_url, timeout=10) as http:
            quote = request_quote(http, native_bridge(user.address))
            sent = execute_steps(quote, user, rpc_urls(devnet))
            hint = {"txHash": sent["deposit"], "chainId": str(ORIGIN)}
            assert http.post("/transactions/index", json=hint).status_code == 200
            status = final_status(http, quote["steps"][0]["requestId"], timeout=60)
        assert status["status"] == "success"
        assert process.poll() is None, "the workers process exited"
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=20)
    assert process.returncode == 0, errors.decode()[-2000:]
