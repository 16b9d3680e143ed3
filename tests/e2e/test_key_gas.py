"""Gas for every key, on the devnet: a gas sponsor drained below its minimum is topped up from
the solver exactly once, to its target, even when the service is killed (SIGKILL) and started
again with the top-up in flight; the solver's own key low shows on /readyz, on /chains and in
the metrics, and clears once it is funded."""

from __future__ import annotations

import time
import tomllib
from pathlib import Path
from typing import Any

import httpx
import tomli_w
from hexbytes import HexBytes
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import select
from web3 import Web3

from crossfill.config import Deployment
from crossfill.devnet.anvil import anvil_rpc, set_native_balance
from crossfill.domain.key_gas import SOLVER, SOLVER_LOW
from crossfill.kinds.evm.config import KeyGasConfig, evm_chains
from crossfill.kinds.evm.gas_keeper import purpose_of
from crossfill.store.tables import SentTransaction
from tests.conftest import RunningDevnet
from tests.e2e.bridging import NATIVE, balance
from tests.support.database import rows_in
from tests.support.service import ServiceProcess, ServiceThread, StartService, service_settings
from tests.support.waiting import wait_for

ETHER = 10**18
MINIMUM, TARGET = ETHER, 2 * ETHER
SPONSOR_ROLE = "gasless-sponsor-0"
# The service in a thread of this process or in a process of its own.
Service = ServiceThread | ServiceProcess
# The keeper reads the keys' balances this often here (10 s by default).
CHECK_SECONDS = 0.2


def _with_key_gas(deployment: Deployment) -> Deployment:
    settings = KeyGasConfig(
        minimum_wei=MINIMUM, target_wei=TARGET, check_interval_seconds=CHECK_SECONDS
    )
    chains = tuple(
        chain.model_copy(update={"key_gas": settings}) for chain in evm_chains(deployment)
    )
    return deployment.model_copy(update={"chains": chains})


def _deployment_file(devnet: RunningDevnet, path: Path) -> Path:
    """The devnet's deployment file with every chain's `key_gas` as `_with_key_gas` sets it."""
    document: dict[str, Any] = tomllib.loads(devnet.deployment_path.read_text())
    for chain in document["chains"]:
        chain["key_gas"] = {
            "minimum_wei": MINIMUM,
            "target_wei": TARGET,
            "check_interval_seconds": CHECK_SECONDS,
        }
    path.write_text(tomli_w.dumps(document))
    return path


def _top_ups(service: Service, chain_id: int, address: str) -> list[SentTransaction]:
    purpose = purpose_of(chain_id, address)
    return rows_in(
        service.database, select(SentTransaction).where(SentTransaction.purpose == purpose)
    )


def _samples(service: Service, name: str) -> dict[tuple[str, str], float]:
    """A series' samples by (chain_id, key)."""
    scraped = text_string_to_metric_families(httpx.get(f"{service.base_url}/metrics").text)
    return {
        (sample.labels["chain_id"], sample.labels["key"]): sample.value
        for family in scraped
        for sample in family.samples
        if sample.name == name
    }


def _ready(service: Service) -> dict[str, Any]:
    response = httpx.get(f"{service.base_url}/readyz")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _status_messages(service: Service) -> dict[int, str | None]:
    chains = httpx.get(f"{service.base_url}/chains").json()["chains"]
    return {chain["id"]: chain["statusMessage"] for chain in chains}


def test_a_sponsor_drained_below_its_minimum_is_topped_up_once_across_a_kill(
    devnet: RunningDevnet, tmp_path: Path
) -> None:
    chain = evm_chains(devnet.deployment)[0]
    sponsor = devnet.deployment.gasless.sponsors[0].address
    held = balance(devnet, chain.id, NATIVE, sponsor)
    drained, key = ETHER // 10, (str(chain.id), SPONSOR_ROLE)
    settings = service_settings(tmp_path, _deployment_file(devnet, tmp_path / "deployment.toml"))
    service = ServiceProcess(settings)
    set_native_balance(chain.rpc_url, sponsor, drained)
    # Blocks are mined on demand only: the top-up stays in flight across the kill.
    anvil_rpc(chain.rpc_url, "evm_setAutomine", [False])
    try:
        service.start()
        assert wait_for(lambda: len(_top_ups(service, chain.id, sponsor)) == 1, timeout=20)
        service.kill()  # SIGKILL: nothing runs on the way out
        time.sleep(10 * CHECK_SECONDS)
        assert balance(devnet, chain.id, NATIVE, sponsor) == drained  # not mined yet
        service.start()
        time.sleep(10 * CHECK_SECONDS)  # the restarted keeper finds it in flight
        assert len(_top_ups(service, chain.id, sponsor)) == 1
        # the process started again sent none
        assert _samples(service, "crossfill_gas_top_ups_total").get(key, 0) == 0
        anvil_rpc(chain.rpc_url, "evm_mine", [])
    finally:
        anvil_rpc(chain.rpc_url, "evm_setAutomine", [True])
    try:
        assert wait_for(lambda: balance(devnet, chain.id, NATIVE, sponsor) == TARGET, timeout=10)
        assert wait_for(
            lambda: _samples(service, "crossfill_key_gas_balance").get(key) == TARGET / ETHER,
            timeout=10,
        )
        time.sleep(10 * CHECK_SECONDS)  # ticks after it landed: nothing more
        (top_up,) = _top_ups(service, chain.id, sponsor)
        assert top_up.status == "mined" and top_up.request_id is None
        assert top_up.sender == devnet.deployment.solver.address.lower()
        receipt = Web3(Web3.HTTPProvider(chain.rpc_url)).eth.get_transaction_receipt(
            HexBytes(top_up.tx_hash)
        )
        assert receipt["gasUsed"] == 21_000 and receipt["status"] == 1
        sent = Web3(Web3.HTTPProvider(chain.rpc_url)).eth.get_transaction(HexBytes(top_up.tx_hash))
        assert sent["value"] == TARGET - drained
        assert balance(devnet, chain.id, NATIVE, sponsor) == TARGET
        assert _samples(service, "crossfill_key_gas_low")[key] == 0
        assert "keysLowOnGas" not in _ready(service)["checks"]
    finally:
        service.stop()
        set_native_balance(chain.rpc_url, sponsor, held)


def test_a_top_up_is_counted_in_the_metrics_once(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    chain = evm_chains(devnet.deployment)[0]
    sponsor = devnet.deployment.gasless.sponsors[0].address
    held = balance(devnet, chain.id, NATIVE, sponsor)
    set_native_balance(chain.rpc_url, sponsor, ETHER // 4)
    try:
        service = start_service(_with_key_gas(devnet.deployment), run_workers=True)
        assert wait_for(lambda: balance(devnet, chain.id, NATIVE, sponsor) == TARGET, timeout=20)
        time.sleep(10 * CHECK_SECONDS)
        key = (str(chain.id), SPONSOR_ROLE)
        assert _samples(service, "crossfill_gas_top_ups_total")[key] == 1
        assert _samples(service, "crossfill_gas_top_up_wei_total")[key] == TARGET - ETHER // 4
        assert len(_top_ups(service, chain.id, sponsor)) == 1
    finally:
        set_native_balance(chain.rpc_url, sponsor, held)


def test_the_solver_low_on_gas_shows_on_readyz_chains_and_metrics_until_funded(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    chain = evm_chains(devnet.deployment)[1]
    solver = devnet.deployment.solver.address
    held = balance(devnet, chain.id, NATIVE, solver)
    set_native_balance(chain.rpc_url, solver, ETHER // 2)
    try:
        service = start_service(_with_key_gas(devnet.deployment), run_workers=True)
        assert wait_for(lambda: "keysLowOnGas" in _ready(service)["checks"], timeout=20)
        ready = _ready(service)
        assert ready["status"] == "ready"  # shown, not unready: it still answers and refunds
        assert ready["checks"]["keysLowOnGas"] == {
            str(chain.id): {SOLVER: f"0.5 ETH, below its minimum 1 ETH: {SOLVER_LOW}"}
        }
        messages = _status_messages(service)
        assert "solver is low on gas" in str(messages[chain.id])
        assert messages[evm_chains(devnet.deployment)[0].id] is None
        low = _samples(service, "crossfill_key_gas_low")
        assert low[str(chain.id), SOLVER] == 1
        assert low[str(evm_chains(devnet.deployment)[0].id), SOLVER] == 0
        assert _samples(service, "crossfill_key_gas_minimum")[str(chain.id), SOLVER] == 1.0
        set_native_balance(chain.rpc_url, solver, held)  # the operator funds it
        assert wait_for(lambda: "keysLowOnGas" not in _ready(service)["checks"], timeout=20)
        assert _status_messages(service)[chain.id] is None
        assert _samples(service, "crossfill_key_gas_low")[str(chain.id), SOLVER] == 0
    finally:
        set_native_balance(chain.rpc_url, solver, held)
