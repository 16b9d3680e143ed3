"""The adversarial suite: valid transactions sent in the worst order, against the real service
on the session devnet (the e2e suite's fixtures: `devnet`, `start_service`, `service`,
`client`, `database`).

After each test, every unit that reached the service while it ran (a Depository, the Receiver,
a deposit address, the SVM vault, the exchange account) is checked from the chains' own ledgers
to have exactly one outcome (`tests.money_invariant`), on the database and every chain of each
service the test started with its workers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from crossfill.config import Deployment
from tests.adversarial.cross_vm import (  # noqa: F401  (fixtures, registered by import)
    cross_vm,
    cross_vm_deployment,
    cross_vm_service,
    exchange,
    svm_node,
)
from tests.conftest import RunningDevnet
from tests.e2e.conftest import (  # noqa: F401  (fixtures, registered by import)
    client,
    database,
    service,
)
from tests.e2e.conftest import start_service as e2e_start_service
from tests.e2e.svm.conftest import svm_deployment  # noqa: F401  (fixtures)
from tests.money_invariant import MoneyReport, account_for_money, heads, wait_until_accounted
from tests.support.service import ServiceThread, StartService

start_service_of_e2e = e2e_start_service  # the e2e fixture, under a name of its own


@pytest.fixture
def http(
    start_service: StartService,
    svm_deployment: Deployment,  # noqa: F811
) -> Iterator[httpx.Client]:
    """A client of a service with workers on the deployment that includes the SVM chain (the
    suite's `service` is the EVM devnet's own)."""
    started = start_service(svm_deployment, run_workers=True)
    with httpx.Client(base_url=started.base_url, timeout=10) as answering:
        yield answering


@pytest.fixture
def start_service(
    start_service_of_e2e: StartService, devnet: RunningDevnet
) -> Iterator[StartService]:
    """The e2e fixture's, each service with workers checked by the money invariant after the
    test (before it stops: refunds still on their way may land), on every chain of its
    deployment: the EVM chains from the test's start, the SVM chains and the exchange from
    the service's (their nodes outlive a test)."""
    since = heads(devnet.deployment)
    checked: list[tuple[ServiceThread, dict[int, int]]] = []

    def _start(*args: Any, **options: Any) -> ServiceThread:
        deployment = args[0] if args else options.get("deployment")
        checks = bool(options.get("run_workers"))
        starts = {**heads(deployment), **since} if checks and deployment is not None else since
        started = start_service_of_e2e(*args, **options)
        if checks:
            checked.append((started, starts))
        return started

    yield _start
    for started, starts in checked:
        assert_money_accounted(started.deployment, started.settings.database, starts)


def assert_money_accounted(
    deployment: Deployment, database_url: str, since: dict[int, int]
) -> None:
    """Every unit since `since` accounted for, once what is on its way has landed."""

    def check() -> MoneyReport:
        return account_for_money(deployment, database_url, since=since)

    report = wait_until_accounted(check, timeout=60)
    assert not report.unaccounted, report.unaccounted
    assert not report.unsettled, report.unsettled
