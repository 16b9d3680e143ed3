"""The SVM vault's SOL for fees, on the devnet's SVM node: kept above the default minimum it
is not shown; below its minimum (`[svm_chains.key_gas]`) the chain shows on /readyz, /chains
and in the metrics, the service still ready."""

from __future__ import annotations

import httpx

from crossfill.config import Deployment
from crossfill.domain.key_gas import OWN_ACCOUNT_LOW, SOLVER
from crossfill.kinds.svm.config import SVM_CHAIN_ID, SVM_SECTION, SvmKeyGas
from tests.support.key_gas import key_gas_low, low_on_gas, status_messages
from tests.support.service import StartService
from tests.support.waiting import wait_for

# More SOL than the devnet vault holds (a billion SOL).
BEYOND = 10**18


def test_the_vault_above_its_default_minimum_is_not_shown(http: httpx.Client) -> None:
    base_url = str(http.base_url)
    assert wait_for(lambda: key_gas_low(base_url, SVM_CHAIN_ID, SOLVER) == 0, timeout=20)
    assert str(SVM_CHAIN_ID) not in low_on_gas(base_url)


def test_the_vault_below_its_minimum_shows_on_readyz_chains_and_metrics(
    start_service: StartService, svm_deployment: Deployment
) -> None:
    (chain,) = svm_deployment.section(SVM_SECTION)
    raised = chain.model_copy(update={"key_gas": SvmKeyGas(minimum_lamports=BEYOND)})
    service = start_service(svm_deployment.with_section(SVM_SECTION, (raised,)), run_workers=True)
    base_url = service.base_url
    assert wait_for(lambda: str(SVM_CHAIN_ID) in low_on_gas(base_url), timeout=20)
    shown = low_on_gas(base_url)[str(SVM_CHAIN_ID)]
    assert list(shown) == [SOLVER]
    assert shown[SOLVER].endswith(f" SOL, below its minimum 1000000000 SOL: {OWN_ACCOUNT_LOW}")
    assert "solver is low on gas" in str(status_messages(base_url)[SVM_CHAIN_ID])
    assert key_gas_low(base_url, SVM_CHAIN_ID, SOLVER) == 1
