"""Reserved inventory on the perps exchange, over the real API and the devnet exchange: quotes
to it answer from the solver account's free inventory (its balance less the outputs of the
orders in flight there), and deposits that together ask for more than the account holds are
paid in deposit order while it covers them; the rest wait, then are refunded as over
capacity, never posted to be refused for balance."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import select

from crossfill.devnet import accounts
from crossfill.devnet.exchange.process import ExchangeProcess, fund, start_exchange
from crossfill.kinds.perps.config import PERPS_SECTION
from crossfill.store.tables import PerpsPayment
from tests.conftest import RunningDevnet
from tests.e2e.bridging import NATIVE, OPERATOR_TOKEN, ORIGIN, funded_user, stored_rows
from tests.e2e.oversubscription import oversubscribe
from tests.e2e.perps.conftest import PERPS_ID, to_perps
from tests.support.devnets import exchange_config
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for

ORDER = 10**16  # 0.01 ETH in
ORDERS = 8
INVENTORY = 100 * 10**6  # perps USDC the solver's account holds
INVENTORY_WAIT_SECONDS = 8


@pytest.fixture(scope="module")
def exchange(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExchangeProcess]:
    """An exchange of this module's own, the solver's account holding only `INVENTORY`."""
    home = tmp_path_factory.mktemp("exchange")
    process = start_exchange(state_path=home / "exchange-state.sqlite3", log_dir=home)
    try:
        fund(process.api_url, accounts.solver().address, str(INVENTORY // 10**6))
        yield process
    finally:
        process.stop()


@pytest.fixture
def perps_service(
    start_service: StartService, devnet: RunningDevnet, exchange: ExchangeProcess
) -> ServiceThread:
    config = exchange_config(exchange, inventory_wait_seconds=INVENTORY_WAIT_SECONDS)
    deployment = devnet.deployment.with_section(PERPS_SECTION, (config,))
    return start_service(deployment, run_workers=True, settings={"admin_token": OPERATOR_TOKEN})


def _body(user: LocalAccount) -> dict[str, Any]:
    return to_perps(user.address, Account.create().address, NATIVE, ORDER).wire()


def _capacity(http: httpx.Client) -> int:
    answer = http.get(
        "/config/v2",
        params={"originChainId": ORIGIN, "destinationChainId": PERPS_ID, "currency": "usdc"},
    )
    assert answer.status_code == 200, answer.text
    return int(answer.json()["solver"]["capacityPerRequest"])


def test_oversubscribed_deposits_to_the_exchange_are_paid_while_covered_and_the_rest_refunded(
    devnet: RunningDevnet, perps_service: ServiceThread, http: httpx.Client
) -> None:
    users = [funded_user(devnet) for _ in range(ORDERS + 1)]
    assert wait_for(lambda: _capacity(http) == INVENTORY, timeout=10)
    outcome = oversubscribe(
        devnet,
        http,
        [(user, _body(user)) for user in users[:ORDERS]],
        late=_body(users[ORDERS]),
        capacity=lambda: _capacity(http),
        wait_seconds=INVENTORY_WAIT_SECONDS,
    )
    order_out = max(outcome.outputs.values())
    assert sum(outcome.outputs.values()) > 2 * INVENTORY
    paid, refunded = outcome.paid_and_refunded_for_capacity(orders=ORDERS, order_out=order_out)
    # Nothing posted that the account could not pay: one credited transfer per paid order,
    # none refused, and what was paid fits in the inventory there was.
    payments = stored_rows(
        perps_service, select(PerpsPayment).where(PerpsPayment.purpose == "fill")
    )
    assert sorted(row.payment_key for row in payments) == sorted(paid)
    assert {row.status for row in payments} == {"credited"}
    assert sum(outcome.outputs[rid] for rid in paid) <= INVENTORY
    print(
        f"\nperps: account {INVENTORY} units of USDC, {ORDERS} orders of about {order_out}: "
        f"{len(paid)} paid, {len(refunded)} refunded SOLVER_CAPACITY_EXCEEDED"
    )
