"""`crossfill run --workers-only` beside an API-only process on one PostgreSQL: the API
answers, the hint it forwards reaches the workers, the bridge completes; the workers run below
the API's CPU priority; the workers' own series are scraped from their ops listener."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import httpx

from crossfill.devnet.child_process import free_port
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, ORIGIN, bridge_request, funded_user, rpc_urls
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.support.service import ServiceProcess, StartService, service_settings


def test_workers_only_beside_an_api_process_complete_a_bridge(
    start_service: StartService, devnet: RunningDevnet, postgres_url: str, tmp_path: Path
) -> None:
    api = start_service(run_workers=False, settings={"database_url": postgres_url})
    settings = service_settings(
        tmp_path, devnet.deployment_path, database_url=postgres_url, metrics_token="scrape-token"
    )
    workers = ServiceProcess.workers_only(settings, ops_port=free_port()).start()
    try:
        user = funded_user(devnet)
        with UserClient(api.base_url, rpc_urls(devnet)) as user_client:
            quote = user_client.quote(bridge_request(user.address))
            succeeded(user_client.execute(quote, evm_wallet(user)))
            assert user_client.hints_answered() == [200]  # taken by the API, forwarded
        assert workers.process is not None and workers.process.poll() is None, (
            "the workers process exited"
        )
        # The API serves in this process: the workers run the default increment below it.
        api_niceness = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, workers.pid) == min(api_niceness + 10, 19)
        _scrape_the_workers(workers.probe_url, api.base_url)
    finally:
        exit_code = workers.stop(timeout=20)
    assert exit_code == 0, workers.log_tail()


def _scrape_the_workers(ops: str, api_url: str) -> None:
    """The fill was the workers': its series are on their listener, not on the API's
    `/metrics`. The listener serves the probes too, and nothing else."""
    bearer = {"Authorization": "Bearer scrape-token"}
    with httpx.Client(base_url=ops, timeout=10) as http:
        assert http.get("/metrics").status_code == 401  # the metrics token holds here too
        scraped = http.get("/metrics", headers=bearer)
        assert scraped.status_code == 200, scraped.text
        assert http.get("/healthz").json() == {"status": "ok"}
        ready = http.get("/readyz")
        assert ready.status_code == 200, ready.text
        assert set(ready.json()["checks"]["chains"]) == {str(ORIGIN), str(DESTINATION)}
        missing = http.post("/quote/v2", json={})
        assert missing.status_code == 404
        assert set(missing.json()) >= {"message", "errorCode"}
    filled = (
        "crossfill_fill_service_seconds_count"
        f'{{destination_chain_id="{DESTINATION}",origin_chain_id="{ORIGIN}"}} 1.0'
    )
    assert filled in scraped.text, scraped.text
    api_series = httpx.get(f"{api_url}/metrics", timeout=10).text
    assert filled not in api_series


def test_workers_only_with_its_ops_port_taken_stops_saying_so(
    devnet: RunningDevnet, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        workers = ServiceProcess.workers_only(
            service_settings(tmp_path, devnet.deployment_path), ops_port=port
        )
        finished = workers.run_to_exit(timeout=60)
    said = finished.stdout + finished.stderr
    assert finished.returncode == 1, said
    assert f"cannot listen on 127.0.0.1:{port}" in said and "Traceback" not in said
