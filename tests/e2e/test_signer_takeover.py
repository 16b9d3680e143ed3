"""Two worker processes (`crossfill run --workers-only`, each under its own worker name) and an
API process on one PostgreSQL: the solver key's signer lease on the destination passes to the
standby at once on a graceful stop, within the lease after a SIGKILL mid-flight, and at once to
a process started again under the name of the one that crashed; on chain, every order is
filled once."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from eth_account.signers.local import LocalAccount
from sqlalchemy import select
from web3 import Web3

from crossfill.devnet.child_process import free_port
from crossfill.devnet.deploy import contract_at
from crossfill.store.db import as_utc
from crossfill.store.tables import SignerLease
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    deposit_native,
    fills_journalled,
    final_status,
    funded_user,
    native_bridge,
    quote_request_id,
    request_quote,
    rpc_urls,
)
from tests.support.database import rows_in
from tests.support.service import ServiceProcess, StartService, service_settings
from tests.support.waiting import wait_for

# The default signer lease; the tests of the hand-overs that must not wait for it use a lease
# far longer than they may take.
SHORT_LEASE, LONG_LEASE = 3.0, 60.0
# The keeper asks for a lease held elsewhere every 0.5 s; then a tick of the worker.
POLL_SLACK = 1.5
# Well within the solver's own request leases (a minute): the orders a stopped process had
# claimed are not left waiting for those.
FILLED_WITHIN = 30


@contextmanager
def _api(start_service: StartService, postgres_url: str) -> Iterator[httpx.Client]:
    api = start_service(run_workers=False, settings={"database_url": postgres_url})
    with httpx.Client(base_url=api.base_url, timeout=10) as http:
        yield http


def _worker(
    devnet: RunningDevnet, postgres_url: str, home: Path, name: str, lease: float
) -> ServiceProcess:
    home.mkdir(exist_ok=True)
    settings = service_settings(
        home,
        devnet.deployment_path,
        database_url=postgres_url,
        worker_name=name,
        signer_lease_seconds=lease,
    )
    return ServiceProcess.workers_only(settings, ops_port=free_port())


@contextmanager
def _two_workers(
    devnet: RunningDevnet, postgres_url: str, tmp_path: Path, lease: float
) -> Iterator[tuple[ServiceProcess, ServiceProcess]]:
    """Worker processes `a` (signing) and `b` (its standby, started once `a` signs)."""
    with ExitStack() as running:
        first = _worker(devnet, postgres_url, tmp_path / "a", "a", lease).start()
        running.callback(first.stop)
        _signed_by(devnet, postgres_url, first)
        standby = _worker(devnet, postgres_url, tmp_path / "b", "b", lease).start()
        running.callback(standby.stop)
        assert _signer(devnet, postgres_url) == first.pid  # the standby waits
        yield first, standby


def _signer(devnet: RunningDevnet, postgres_url: str) -> int | None:
    """The pid of the process whose lease on the solver key on the destination runs now."""
    solver = devnet.deployment.solver.address.lower()
    leases = rows_in(
        postgres_url,
        select(SignerLease).where(
            SignerLease.chain_id == DESTINATION, SignerLease.sender == solver
        ),
    )
    now = datetime.now(UTC)
    running = [lease for lease in leases if as_utc(lease.expires_at) > now]
    return int(running[0].holder.split(":")[1]) if running else None


def _signed_by(devnet: RunningDevnet, postgres_url: str, worker: ServiceProcess) -> float:
    """Seconds until `worker` holds the solver key's lease (at most a minute)."""
    started = time.monotonic()
    assert wait_for(
        lambda: _signer(devnet, postgres_url) == worker.pid, timeout=60, interval=0.1
    ), worker.log_tail()
    return time.monotonic() - started


def _deposited(
    http: httpx.Client, devnet: RunningDevnet, users: list[LocalAccount]
) -> list[dict[str, Any]]:
    """One native bridge per user, quoted and deposited."""
    quotes = [request_quote(http, native_bridge(user.address)) for user in users]
    for user, quote in zip(users, quotes, strict=True):
        deposit_native(devnet, user, quote, int(quote["details"]["currencyIn"]["amount"]))
    return quotes


def _each_filled_once(
    http: httpx.Client, devnet: RunningDevnet, quotes: list[dict[str, Any]]
) -> None:
    for quote in quotes:
        assert (
            final_status(http, quote_request_id(quote), timeout=FILLED_WITHIN)["status"]
            == "success"
        )
    destination = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION]))
    filler = contract_at(destination, "Filler", devnet.deployment.chains[1].contracts.filler)
    fills = Counter(
        "0x" + event.args["orderId"].hex()
        for event in filler.events.OrderFilled().get_logs(from_block=0)
    )
    assert [fills[quote["protocol"]["v2"]["orderId"]] for quote in quotes] == [1] * len(quotes)


def test_a_killed_signer_s_standby_signs_within_the_lease_and_fills_nothing_twice(
    start_service: StartService, devnet: RunningDevnet, postgres_url: str, tmp_path: Path
) -> None:
    with (
        _api(start_service, postgres_url) as http,
        _two_workers(devnet, postgres_url, tmp_path, SHORT_LEASE) as (first, standby),
    ):
        quotes = _deposited(http, devnet, [funded_user(devnet) for _ in range(6)])
        assert wait_for(  # mid-flight: a fill signed, others perhaps not
            lambda: any(fills_journalled(postgres_url, quote_request_id(q)) for q in quotes),
            timeout=30,
            interval=0.05,
        )
        first.kill()
        assert _signed_by(devnet, postgres_url, standby) <= SHORT_LEASE + POLL_SLACK
        _each_filled_once(http, devnet, quotes)


def test_a_graceful_stop_and_a_restart_after_a_crash_hand_the_key_over_at_once(
    start_service: StartService, devnet: RunningDevnet, postgres_url: str, tmp_path: Path
) -> None:
    with (
        _api(start_service, postgres_url) as http,
        _two_workers(devnet, postgres_url, tmp_path, LONG_LEASE) as (first, standby),
    ):
        quotes = _deposited(http, devnet, [funded_user(devnet) for _ in range(3)])
        assert first.stop() == 0, first.log_tail()  # SIGTERM: its leases freed on the way out
        assert _signed_by(devnet, postgres_url, standby) <= POLL_SLACK

        # Started again beside the signer, it stays the standby; the signer crashes and is
        # started again under its name: it signs at once, the standby still waiting.
        first.start()
        assert _signer(devnet, postgres_url) == standby.pid
        quotes += _deposited(http, devnet, [funded_user(devnet) for _ in range(3)])
        standby.kill()
        standby.start()
        assert _signed_by(devnet, postgres_url, standby) <= POLL_SLACK
        _each_filled_once(http, devnet, quotes)
