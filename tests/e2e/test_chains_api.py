"""GET /chains and the service's HTTP surface, driven over real HTTP against anvil chains."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from web3 import Web3

from crossfill.devnet.anvil import anvil_rpc
from crossfill.kinds.evm.config import evm_chains
from crossfill.types import TraceApi
from tests.conftest import RunningDevnet
from tests.e2e.conftest import validate_against
from tests.support.service import StartService, run_cli
from tests.support.waiting import wait_for

SDK_HEADERS = "content-type,x-api-key,relay-sdk-version,relay-kit-ui-version"


def _chains(client: httpx.Client, **params: str) -> dict[int, dict[str, Any]]:
    response = client.get("/chains", params=params)
    assert response.status_code == 200, response.text
    validate_against("chains", response.json())
    return {chain["id"]: chain for chain in response.json()["chains"]}


def test_chains_lists_every_devnet_chain_with_deployed_contracts(
    client, devnet: RunningDevnet
) -> None:
    chains = _chains(client)
    assert sorted(chains) == [900001, 900002]
    for config in evm_chains(devnet.deployment):
        chain = chains[config.id]
        contracts = chain["contracts"]
        assert chain["vmType"] == "evm"
        assert chain["currency"] == {
            "id": "eth",
            "symbol": "ETH",
            "name": "Ether",
            "address": "0x0000000000000000000000000000000000000000",
            "decimals": 18,
            "supportsBridging": True,
        }
        assert chain["protocol"]["v2"] == {
            "chainId": config.name,
            "depository": config.contracts.depository,
        }
        assert contracts["serviceReceiver"] == config.contracts.receiver
        # ERC-7683 settlers, deployed by the devnet on every chain (docs/erc7683.md).
        assert contracts["erc7683OriginSettler"] == config.contracts.erc7683_origin_settler
        assert contracts["erc7683DestinationSettler"] == (
            config.contracts.erc7683_destination_settler
        )
        assert contracts["erc7683OriginSettler"] and contracts["erc7683DestinationSettler"]
        assert contracts["v3"] == {
            "erc20Router": config.contracts.router,
            "approvalProxy": config.contracts.approval_proxy,
        }
        assert chain["solverAddresses"] == [devnet.deployment.solver.address]
        assert {c["symbol"] for c in chain["erc20Currencies"]} == {"USDC", "WETH"}
        assert chain["disabled"] is False and chain["blockProductionLagging"] is False
        assert chain["depositEnabled"] is True
        # The devnet's chains settle on no other chain: each names itself.
        assert chain["baseChainId"] == config.id
        web3 = Web3(Web3.HTTPProvider(chain["httpRpcUrl"]))
        assert web3.eth.chain_id == config.id
        for role in ("depository", "filler", "router", "approval_proxy", "receiver", "multicaller"):
            assert len(web3.eth.get_code(getattr(config.contracts, role))) > 0, role


def test_include_chains_filters_and_referrer_and_unknown_params_are_accepted(client) -> None:
    assert list(_chains(client, includeChains="900002", referrer="my-app", other="x")) == [900002]
    assert sorted(_chains(client, includeChains="900001, 900002,")) == [900001, 900002]
    assert _chains(client, includeChains="424242") == {}


@pytest.mark.parametrize("value", ["abc", "1.5", "-1", "0", "900001;drop"])
def test_bad_include_chains_is_a_json_400(client, value: str) -> None:
    response = client.get("/chains", params={"includeChains": value})
    assert response.status_code == 400
    body = response.json()
    assert body["statusCode"] == 400
    assert "includeChains" in body["message"]


def test_unknown_path_and_wrong_method_answer_json(client) -> None:
    missing = client.get("/no/such/path")
    assert missing.status_code == 404
    assert missing.json() == {"message": "Not Found", "statusCode": 404}
    wrong = client.post("/chains")
    assert wrong.status_code == 405
    assert wrong.json()["statusCode"] == 405


def test_cors_preflight_allows_the_sdk_headers(client) -> None:
    response = client.options(
        "/chains",
        headers={
            "Origin": "https://dapp.example",
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": SDK_HEADERS,
        },
    )
    assert response.status_code == 200
    allowed = response.headers["access-control-allow-headers"].lower()
    for header in SDK_HEADERS.split(","):
        assert header in allowed


def test_health_readiness_and_docs(client) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"] == {"database": "ok", "chains": {"900001": "ok", "900002": "ok"}}
    assert "/chains" in client.get("/openapi.json").json()["paths"]
    assert client.get("/docs").status_code == 200


@pytest.mark.parametrize("traces", list(TraceApi))
def test_readiness_asks_the_traces_each_chain_is_configured_to_read(
    start_service: StartService, devnet, traces: TraceApi
) -> None:
    """anvil serves both kinds; an endpoint without them is caught by the same check
    (tests/unit/test_internal_transfers_client.py)."""
    chains = tuple(
        chain.model_copy(update={"trace_internal_transfers": traces})
        for chain in evm_chains(devnet.deployment)
    )
    service = start_service(devnet.deployment.model_copy(update={"chains": chains}))
    response = httpx.get(f"{service.base_url}/readyz")
    assert response.status_code == 200, response.text
    assert response.json()["checks"]["chains"] == {"900001": "ok", "900002": "ok"}
    asked = "debug_traceCall" if traces is TraceApi.GETH else "trace_filter"
    scraped = text_string_to_metric_families(httpx.get(f"{service.base_url}/metrics").text)
    traced = {
        sample.labels["chain_id"]
        for family in scraped
        for sample in family.samples
        if sample.name == "crossfill_rpc_calls_total"
        and sample.labels["call"] == asked
        and sample.labels["outcome"] == "ok"
    }
    assert traced == {"900001", "900002"}


def test_readiness_fails_when_an_enabled_chain_is_unreachable(
    start_service: StartService, devnet
) -> None:
    broken = evm_chains(devnet.deployment)[1].model_copy(
        update={"internal_rpc_url": "http://127.0.0.1:9"}
    )
    deployment = devnet.deployment.model_copy(
        update={"chains": (evm_chains(devnet.deployment)[0], broken)}
    )
    service = start_service(deployment)
    response = httpx.get(f"{service.base_url}/readyz")
    assert response.status_code == 503
    assert response.json()["statusCode"] == 503
    assert "900002" in response.json()["message"]


def test_block_production_lagging_turns_true_and_back(start_service: StartService, devnet) -> None:
    watched = evm_chains(devnet.deployment)[0]
    config = watched.model_copy(update={"block_lag_threshold_seconds": 1.5})
    deployment = devnet.deployment.model_copy(
        update={"chains": (config, evm_chains(devnet.deployment)[1])}
    )
    rpc = watched.rpc_url
    anvil_rpc(rpc, "evm_setIntervalMining", [1])
    try:
        service = start_service(deployment)
        with httpx.Client(base_url=service.base_url) as http:

            def lagging() -> bool:
                return bool(_chains(http)[watched.id]["blockProductionLagging"])

            assert wait_for(lambda: not lagging(), timeout=5)
            anvil_rpc(rpc, "evm_setIntervalMining", [0])  # the chain stops producing blocks
            assert wait_for(lagging, timeout=6)
            assert _chains(http)[900002]["blockProductionLagging"] is False
            anvil_rpc(rpc, "evm_setIntervalMining", [1])  # production resumes
            assert wait_for(lambda: not lagging(), timeout=6)
    finally:
        anvil_rpc(rpc, "evm_setIntervalMining", [0])
        anvil_rpc(rpc, "evm_setAutomine", [True])


def test_operator_disables_a_chain_without_restart(client, devnet, tmp_path) -> None:
    disabled = run_cli(
        "chains",
        "disable",
        "900002",
        "--reason",
        "RPC incident",
        home=tmp_path,
        deployment_file=devnet.deployment_path,
    )
    assert disabled.returncode == 0, disabled.stderr
    chain = _chains(client)[900002]
    assert chain["disabled"] is True and chain["depositEnabled"] is False
    assert chain["statusMessage"] == "RPC incident"
    assert client.get("/readyz").json()["checks"]["chains"] == {"900001": "ok"}

    enabled = run_cli(
        "chains", "enable", "900002", home=tmp_path, deployment_file=devnet.deployment_path
    )
    assert enabled.returncode == 0, enabled.stderr
    enabled_chain = _chains(client)[900002]
    assert enabled_chain["disabled"] is False and enabled_chain["depositEnabled"] is True


def test_disabling_an_unknown_chain_is_a_clear_error(devnet, tmp_path) -> None:
    result = run_cli(
        "chains", "disable", "31337", home=tmp_path, deployment_file=devnet.deployment_path
    )
    assert result.returncode == 1
    assert "chain 31337 is not in" in result.stdout


def test_the_cli_takes_ascii_chain_ids_only(devnet, tmp_path) -> None:
    for chain_id in ("\uff19\uff10\uff10\uff10\uff10\uff12", str(2**63)):
        result = run_cli(
            "chains", "disable", chain_id, home=tmp_path, deployment_file=devnet.deployment_path
        )
        assert result.returncode == 2, result.stdout
        assert "chain id must be" in result.stderr
