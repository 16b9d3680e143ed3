"""`crossfill devnet` (what `make run` runs): chains up, service answers, Ctrl-C stops everything,
and starting it again gives a working devnet."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import httpx

from crossfill.devnet.anvil import free_port
from tests.e2e.conftest import validate_against, wait_for


def _ready(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _rpc_answers(rpc_url: str) -> bool:
    try:
        httpx.post(rpc_url, json={"jsonrpc": "2.0", "id": 1, "method": "eth_chainId"}, timeout=1)
    except httpx.HTTPError:
        return False
    return True


def _run_devnet_once(home: Path) -> None:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "CROSSFILL_HOME": str(home)}
    env.pop("CROSSFILL_DEPLOYMENT_FILE", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "crossfill", "devnet", "--port", str(port), "--block-time", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert wait_for(lambda: _ready(base_url), timeout=90, interval=0.5), "devnet never ready"
        chains = httpx.get(f"{base_url}/chains").json()
        validate_against("chains", chains)
        deployment = tomllib.loads((home / "deployment.toml").read_text())
        rpc_urls = [chain["http_rpc_url"] for chain in deployment["chains"]]
        assert [c["id"] for c in chains["chains"]] == [900001, 900002]
        assert [c["httpRpcUrl"] for c in chains["chains"]] == rpc_urls
        assert [c["protocol"]["v2"]["depository"] for c in chains["chains"]] == [
            chain["contracts"]["depository"] for chain in deployment["chains"]
        ]
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, output
    assert f"http://127.0.0.1:{port}" in output
    assert "test account" in output
    assert "devnet stopped" in output
    assert wait_for(lambda: not any(_rpc_answers(url) for url in rpc_urls), timeout=10)


def test_devnet_command_serves_stops_cleanly_and_restarts(tmp_path: Path) -> None:
    _run_devnet_once(tmp_path)
    _run_devnet_once(tmp_path)


def test_killed_devnet_takes_its_chains_down(tmp_path: Path) -> None:
    """Even SIGKILL, which runs no cleanup, leaves no orphan anvil behind."""
    env = {**os.environ, "CROSSFILL_HOME": str(tmp_path)}
    env.pop("CROSSFILL_DEPLOYMENT_FILE", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "crossfill", "devnet", "--chains-only"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deployment_path = tmp_path / "deployment.toml"
    try:
        assert wait_for(deployment_path.exists, timeout=90, interval=0.5)
        rpc_urls = [c["http_rpc_url"] for c in tomllib.loads(deployment_path.read_text())["chains"]]
        assert all(_rpc_answers(url) for url in rpc_urls)
    finally:
        process.kill()
        process.wait()
    assert wait_for(lambda: not any(_rpc_answers(url) for url in rpc_urls), timeout=10)
