"""GET /chains lists the SVM chain (792703809) beside the EVM ones, with its health."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx

from crossfill.devnet.svm.deployment import svm_chain_document
from crossfill.devnet.svm.process import SvmNodeOptions, start_svm_node
from crossfill.devnet.svm.seed import seed_svm
from crossfill.kinds.svm.config import SVM_SECTION, SvmChainConfig
from tests.conftest import RunningDevnet
from tests.e2e.conftest import validate_against
from tests.support.service import StartService
from tests.support.waiting import wait_for

SVM_ID = 792703809


def _chains(client: httpx.Client, **params: str) -> dict[int, dict[str, Any]]:
    response = client.get("/chains", params=params)
    assert response.status_code == 200, response.text
    validate_against("chains", response.json())
    return {chain["id"]: chain for chain in response.json()["chains"]}


def test_chains_lists_the_svm_chain_and_reports_its_node_going_away(
    devnet: RunningDevnet, start_service: StartService, tmp_path: Path
) -> None:
    node = start_svm_node(log_dir=tmp_path, options=SvmNodeOptions(slot_ms=100))
    try:
        seeded = seed_svm(node.rpc_url)
        document = svm_chain_document(rpc_url=node.rpc_url, ws_url=node.ws_url, seeded=seeded)
        svm_chain = SvmChainConfig.model_validate(document)
        deployment = devnet.deployment.with_section(SVM_SECTION, (svm_chain,))
        service = start_service(deployment)
        with httpx.Client(base_url=service.base_url, timeout=10) as client:
            chains = _chains(client)
            assert sorted(chains) == [900001, 900002, SVM_ID]
            svm = chains[SVM_ID]
            assert svm["vmType"] == "svm"
            assert svm["currency"] == {
                "id": "sol", "symbol": "SOL", "name": "Solana", "address": "1" * 32,
                "decimals": 9, "supportsBridging": True,
            }  # fmt: skip
            assert [c["address"] for c in svm["solverCurrencies"]] == [
                "1" * 32,
                str(seeded.usdc_mint),
            ]
            assert svm["solverAddresses"] == [str(seeded.solver)]
            assert svm["protocol"] == {
                "v2": {"chainId": "crossfill-devnet-svm", "depository": str(seeded.solver)}
            }
            assert svm["blockProductionLagging"] is False and svm["statusMessage"] is None
            assert sorted(_chains(client, includeChains=str(SVM_ID))) == [SVM_ID]
            ready = client.get("/readyz")
            assert ready.status_code == 200, ready.text
            assert ready.json()["checks"]["chains"] == {
                "900001": "ok", "900002": "ok", str(SVM_ID): "ok"
            }  # fmt: skip

            node.stop()
            assert wait_for(
                lambda: _chains(client)[SVM_ID]["statusMessage"] is not None, timeout=10
            )
            # The EVM chains are unaffected.
            assert _chains(client)[900001]["statusMessage"] is None
            # Not ready: the SVM node is named (probes share one result a second).
            assert wait_for(lambda: client.get("/readyz").status_code == 503, timeout=5)
            not_ready = client.get("/readyz").json()
            assert not_ready["message"] == f"chains not reachable: {SVM_ID}"
            assert not_ready["checks"]["chains"]["900001"] == "ok"
            assert not_ready["checks"]["chains"][str(SVM_ID)].startswith("getHealth: ")
    finally:
        node.stop()


def test_include_chains_mixes_svm_and_evm_ids(
    devnet: RunningDevnet, start_service: StartService, tmp_path: Path
) -> None:
    node = start_svm_node(log_dir=tmp_path, options=SvmNodeOptions(slot_ms=100))
    try:
        seeded = seed_svm(node.rpc_url)
        document = svm_chain_document(rpc_url=node.rpc_url, ws_url=node.ws_url, seeded=seeded)
        deployment = devnet.deployment.with_section(
            SVM_SECTION, (SvmChainConfig.model_validate(document),)
        )
        with httpx.Client(base_url=start_service(deployment).base_url, timeout=10) as client:
            assert sorted(_chains(client, includeChains=f"{SVM_ID},900001")) == [900001, SVM_ID]
    finally:
        node.stop()
