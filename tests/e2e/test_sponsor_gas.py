"""A gas sponsor's balance checked before a gasless execution is signed, on the devnet: a
sponsor that cannot pay the execution leaves it unsigned (nothing journalled, the request
`depositing`), shown on /readyz and in the metrics, until it is funded (by hand where top-ups
are off) or topped up from the solver to what the execution needs; then it is sent once and
the request succeeds."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from eth_account import Account
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import select

from crossfill.config import Deployment
from crossfill.devnet import accounts
from crossfill.devnet.anvil import set_native_balance
from crossfill.domain.key_gas import EXECUTIONS_WAIT, TOP_UPS_OFF
from crossfill.kinds.evm.config import KeyGasConfig, evm_chains
from crossfill.kinds.evm.gas_keeper import purpose_of
from crossfill.store.tables import SentTransaction
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    NATIVE,
    OPERATOR_TOKEN,
    ORIGIN,
    V2_STILL_SERVED,
    balance,
    final_status,
    journal,
    stored_rows,
)
from tests.e2e.gasless import (
    deploy_delegate,
    execute_body,
    origin_web3,
    quote_calls,
    signed_batch,
    sponsored_key,
    usdc_bridge_quote,
    user_with_usdc,
)
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for

SPONSOR_ROLE = "gasless-sponsor-0"
# Below any execution's gas, above the floor set here: only the execution's need makes it low.
DRAINED = 10**12


@contextmanager
def _drained(rpc_url: str, devnet: RunningDevnet, sponsor: str) -> Iterator[int]:
    """The sponsor's ether set to DRAINED meanwhile; what it held, given back after."""
    held = balance(devnet, ORIGIN, NATIVE, sponsor)
    set_native_balance(rpc_url, sponsor, DRAINED)
    try:
        yield held
    finally:
        set_native_balance(rpc_url, sponsor, held)


FLOOR = 10**11
CHECK_SECONDS = 0.2
AMOUNT = 20_000_000
SOLVER = accounts.solver().address.lower()


def _deployment(devnet: RunningDevnet, *, top_up: bool) -> Deployment:
    settings = KeyGasConfig(
        top_up=top_up,
        minimum_wei=FLOOR,
        target_wei=2 * FLOOR,
        check_interval_seconds=CHECK_SECONDS,
    )
    chains = tuple(
        chain.model_copy(update={"key_gas": settings}) for chain in evm_chains(devnet.deployment)
    )
    return devnet.deployment.model_copy(update={"chains": chains})


def _ready(service: ServiceThread) -> dict[str, Any]:
    response = httpx.get(f"{service.base_url}/readyz", timeout=10)
    assert response.status_code == 200, response.text
    checks: dict[str, Any] = response.json()["checks"]
    return checks


def _low(service: ServiceThread) -> float | None:
    scraped = text_string_to_metric_families(httpx.get(f"{service.base_url}/metrics").text)
    return next(
        (
            sample.value
            for family in scraped
            for sample in family.samples
            if sample.name == "crossfill_key_gas_low"
            and sample.labels == {"chain_id": str(ORIGIN), "key": SPONSOR_ROLE}
        ),
        None,
    )


def _executed(service: ServiceThread, devnet: RunningDevnet, http: httpx.Client) -> str:
    """A user without ether bridges USDC through POST /execute; its request id."""
    delegate = deploy_delegate(devnet)
    user = user_with_usdc(devnet, 50_000_000)
    key, _ = sponsored_key(http, devnet)
    quote = usdc_bridge_quote(http, devnet, user.address, Account.create().address, AMOUNT, key)
    request_id: str = quote["steps"][-1]["requestId"]
    batch = signed_batch(origin_web3(devnet), user, delegate, quote_calls(quote))
    answer = http.post(
        "/execute",
        json=execute_body(user.address, batch, request_id, subsidize=True),
        headers={"x-api-key": key},
    )
    assert answer.status_code == 200, answer.text
    return request_id


def _started(start_service: StartService, devnet: RunningDevnet, *, top_up: bool) -> ServiceThread:
    return start_service(
        _deployment(devnet, top_up=top_up),
        run_workers=True,
        settings={"admin_token": OPERATOR_TOKEN},
        wall_clock=lambda: V2_STILL_SERVED,
    )


def test_an_execution_its_sponsor_cannot_pay_waits_unsigned_and_shown_until_funded(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    chain = evm_chains(devnet.deployment)[0]
    sponsor = accounts.gas_sponsor().address
    with _drained(chain.rpc_url, devnet, sponsor) as held:
        service = _started(start_service, devnet, top_up=False)
        with httpx.Client(base_url=service.base_url, timeout=10) as http:
            request_id = _executed(service, devnet, http)

            def shown() -> str | None:
                low: dict[str, dict[str, str]] = _ready(service).get("keysLowOnGas", {})
                return low.get(str(ORIGIN), {}).get(SPONSOR_ROLE)

            assert wait_for(lambda: shown() is not None, timeout=20)
            assert wait_for(lambda: TOP_UPS_OFF in str(shown()), timeout=10)
            text = str(shown())
            assert text.startswith("0.000001 ETH, below its minimum ") and EXECUTIONS_WAIT in text
            assert _low(service) == 1
            time.sleep(10 * CHECK_SECONDS)
            assert journal(service, request_id) == []  # never signed: no nonce taken
            status = http.get("/intents/status/v3", params={"requestId": request_id}).json()
            assert status["status"] == "depositing"
            assert balance(devnet, ORIGIN, NATIVE, sponsor) == DRAINED

            set_native_balance(chain.rpc_url, sponsor, held)  # the operator funds it
            assert final_status(http, request_id, timeout=60)["status"] == "success"
            (sent, *_) = journal(service, request_id)
            assert sent.purpose == "execute" and sent.sender == sponsor.lower()
            assert wait_for(lambda: "keysLowOnGas" not in _ready(service), timeout=20)
            assert _low(service) == 0


def test_a_sponsor_short_of_an_execution_is_topped_up_to_what_it_needs_then_sends_it(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    chain = evm_chains(devnet.deployment)[0]
    sponsor = accounts.gas_sponsor().address
    with _drained(chain.rpc_url, devnet, sponsor):
        service = _started(start_service, devnet, top_up=True)
        with httpx.Client(base_url=service.base_url, timeout=10) as http:
            request_id = _executed(service, devnet, http)
            assert final_status(http, request_id, timeout=60)["status"] == "success"

        def mined_top_ups() -> list[SentTransaction]:
            return [
                row
                for row in stored_rows(
                    service,
                    select(SentTransaction).where(
                        SentTransaction.purpose == purpose_of(ORIGIN, sponsor)
                    ),
                )
                if row.status == "mined"
            ]

        # The top-up's receipt may be recorded a moment after the execution it paid for.
        assert wait_for(lambda: bool(mined_top_ups()), timeout=30)
        top_ups = mined_top_ups()
        # Topped up from the solver to what the execution needed, far above the floor (the
        # fee may move between reads: a second top-up may follow a rise).
        assert top_ups and all(row.sender == SOLVER for row in top_ups)
        assert balance(devnet, ORIGIN, NATIVE, sponsor) < DRAINED + 10**17
        (sent, *_) = journal(service, request_id)
        assert sent.sender == sponsor.lower()
