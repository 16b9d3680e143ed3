"""`crossfill devnet` (what `make run` runs): chains up, service answers, Ctrl-C stops everything,
and starting it again gives a working devnet."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import httpx
from eth_account import Account

from crossfill.devnet.anvil import set_native_balance
from crossfill.devnet.child_process import free_port
from tests.e2e.bridging import DESTINATION, ORIGIN, bridge_request
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.e2e.wire import validate_against
from tests.support.service import run_cli
from tests.support.waiting import wait_for


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


def _bridge_seconds(base_url: str, rpc_urls: list[str]) -> float:
    """A new user bridges 0.1 ETH from the first chain to the second with the Python client:
    seconds from the deposit's broadcast to `success`."""
    user = Account.create()
    set_native_balance(rpc_urls[0], user.address, 10**19)
    with UserClient(base_url, {ORIGIN: rpc_urls[0], DESTINATION: rpc_urls[1]}) as user_client:
        quote = user_client.quote(bridge_request(user.address))
        sent_at = time.monotonic()
        succeeded(user_client.execute(quote, evm_wallet(user)))
    return time.monotonic() - sent_at


# Contracts the devnet deploys for clients (the service calls none of them), published in its
# deployment file and in what it prints once up.
PUBLISHED = ("deposit_address_factory", "gasless_delegate", "attestation_verifier")


def _code(rpc_url: str, address: str) -> str:
    answer = httpx.post(
        rpc_url,
        json={"jsonrpc": "2.0", "id": 1, "method": "eth_getCode", "params": [address, "latest"]},
        timeout=5,
    )
    return str(answer.json()["result"])


def _run_devnet_once(home: Path) -> float:
    """Start `crossfill devnet`, bridge once, Ctrl-C as a terminal sends it (to the whole
    foreground process group); the bridge's seconds."""
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
        start_new_session=True,
    )
    try:
        assert wait_for(lambda: _ready(base_url), timeout=90, interval=0.5), "devnet never ready"
        chains = httpx.get(f"{base_url}/chains").json()
        validate_against("chains", chains)
        deployment = tomllib.loads((home / "deployment.toml").read_text())
        rpc_urls = [chain["http_rpc_url"] for chain in deployment["chains"]]
        svm_rpc_url = deployment["svm_chains"][0]["http_rpc_url"]
        exchange_url = deployment["perps"]["api_url"]
        assert [c["id"] for c in chains["chains"]] == [900001, 900002, 792703809, 1337]
        assert [c["httpRpcUrl"] for c in chains["chains"]] == [*rpc_urls, svm_rpc_url, exchange_url]
        assert chains["chains"][3]["vmType"] == "hypevm"
        assert [c["protocol"]["v2"]["depository"] for c in chains["chains"][:2]] == [
            chain["contracts"]["depository"] for chain in deployment["chains"]
        ]
        assert chains["chains"][2]["vmType"] == "svm"
        published = [
            chain["contracts"][role] for chain in deployment["chains"] for role in PUBLISHED
        ]
        for chain in deployment["chains"]:
            for role in PUBLISHED:
                assert _code(chain["http_rpc_url"], chain["contracts"][role]) != "0x", role
        bridge_seconds = _bridge_seconds(base_url, rpc_urls)
        os.killpg(process.pid, signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, output
    assert f"http://127.0.0.1:{port}" in output
    assert "test account" in output
    assert all(address in output for address in published), output[:3000]
    assert deployment["gasless"]["sponsors"][0]["address"] in output
    assert "devnet stopped" in output
    # The chains outlive the service's stop: no worker met one gone while stopping.
    assert "unreachable" not in output, output[-3000:]
    assert wait_for(
        lambda: not any(_rpc_answers(url) for url in [*rpc_urls, svm_rpc_url, exchange_url]),
        timeout=10,
    )
    return bridge_seconds


def test_devnet_command_serves_stops_cleanly_and_restarts(tmp_path: Path) -> None:
    """The second start runs new chains on the same database: the first run's cursors and
    requests must not hold the new chains' deposits up (1 s blocks; a few blocks' time)."""
    _run_devnet_once(tmp_path)
    assert _run_devnet_once(tmp_path) < 5


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
        deployment = tomllib.loads(deployment_path.read_text())
        rpc_urls = [c["http_rpc_url"] for c in deployment["chains"]]
        rpc_urls.append(deployment["perps"]["api_url"])  # the exchange dies with it too
        assert all(_rpc_answers(url) for url in rpc_urls)
    finally:
        process.kill()
        process.wait()
    assert wait_for(lambda: not any(_rpc_answers(url) for url in rpc_urls), timeout=10)


def test_devnet_peer_runs_a_second_independent_deployment(tmp_path: Path) -> None:
    """`crossfill devnet --peer`: a second Crossfill on the same chains, its own keys,
    contracts, database and port, named as the main deployment's bridge; Ctrl-C stops both."""
    port, peer_port = free_port(), free_port()
    env = {**os.environ, "CROSSFILL_HOME": str(tmp_path)}
    env.pop("CROSSFILL_DEPLOYMENT_FILE", None)
    command = ["devnet", "--port", str(port), "--peer", "--peer-port", str(peer_port)]
    process = subprocess.Popen(
        [sys.executable, "-m", "crossfill", *command, "--no-svm", "--no-exchange"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    peer_url = f"http://127.0.0.1:{peer_port}"
    try:
        assert wait_for(lambda: _ready(f"http://127.0.0.1:{port}"), timeout=90, interval=0.5)
        assert _ready(peer_url)
        main = tomllib.loads((tmp_path / "deployment.toml").read_text())
        peer = tomllib.loads((tmp_path / "peer" / "deployment.toml").read_text())
        assert main["rebalancing"]["bridge_url"] == peer_url
        assert [c["http_rpc_url"] for c in peer["chains"]] == [
            c["http_rpc_url"] for c in main["chains"]
        ]
        for role in ("solver", "allocator"):
            assert peer[role]["address"] != main[role]["address"]
        chains = httpx.get(f"{peer_url}/chains").json()["chains"]
        for served, mine, theirs in zip(chains, main["chains"], peer["chains"], strict=True):
            assert served["protocol"]["v2"]["depository"] == theirs["contracts"]["depository"]
            assert theirs["contracts"]["depository"] != mine["contracts"]["depository"]
            assert theirs["erc20_currencies"] == mine["erc20_currencies"]  # the same tokens
        assert (tmp_path / "peer" / "crossfill.db").exists()
        os.killpg(process.pid, signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, output
    assert f"Peer Crossfill API  {peer_url}" in output
    assert "devnet stopped" in output
    assert wait_for(lambda: not _ready(peer_url), timeout=10)


def test_devnet_peer_refuses_the_main_deployments_port(tmp_path: Path) -> None:
    answer = run_cli("devnet", "--peer", "--port", "8001", home=tmp_path)
    assert answer.returncode == 2
    assert "the peer needs a port of its own" in answer.stderr
    assert not (tmp_path / "deployment.toml").exists()  # refused before any chain started
