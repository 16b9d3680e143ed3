"""What the solver's exchange account keeps for the exchange's fees, on the devnet exchange:
below its minimum (`[perps.key_gas]`) the exchange shows on /readyz, /chains and in the
metrics, the service still ready; funded above it, it clears."""

from __future__ import annotations

from decimal import Decimal

from crossfill.config import Deployment
from crossfill.devnet.exchange.process import ExchangeProcess, fund
from crossfill.domain.key_gas import OWN_ACCOUNT_LOW, SOLVER
from crossfill.kinds.perps.config import PERPS_SECTION, PerpsKeyGas
from tests.e2e.perps.conftest import PERPS_ID
from tests.support.key_gas import key_gas_low, low_on_gas, status_messages
from tests.support.service import StartService
from tests.support.waiting import wait_for


def test_the_exchange_account_below_its_fee_minimum_is_shown_until_funded(
    start_service: StartService, perps_deployment: Deployment, exchange: ExchangeProcess
) -> None:
    (config,) = perps_deployment.section(PERPS_SECTION)
    account = config.solver.address
    held = Decimal(10**9)  # beyond what the devnet funds the solver's account with
    key_gas = PerpsKeyGas(minimum=held, check_interval_seconds=0.2)
    raised = config.model_copy(update={"key_gas": key_gas})
    deployment = perps_deployment.with_section(PERPS_SECTION, (raised,))
    service = start_service(deployment, run_workers=True)
    base_url = service.base_url
    assert wait_for(lambda: str(PERPS_ID) in low_on_gas(base_url), timeout=20)
    shown = low_on_gas(base_url)[str(PERPS_ID)]
    assert list(shown) == [SOLVER]
    assert shown[SOLVER].endswith(f" USDC, below its minimum 1000000000 USDC: {OWN_ACCOUNT_LOW}")
    assert "solver is low on gas" in str(status_messages(base_url)[PERPS_ID])
    assert key_gas_low(base_url, PERPS_ID, SOLVER) == 1

    fund(exchange.api_url, account, str(held))  # the operator funds it
    assert wait_for(lambda: str(PERPS_ID) not in low_on_gas(base_url), timeout=20)
    assert status_messages(base_url)[PERPS_ID] is None
    assert key_gas_low(base_url, PERPS_ID, SOLVER) == 0
