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
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from web3 import Web3

from crossfill.devnet.child_process import free_port
from crossfill.devnet.deploy import contract_at
from crossfill.kinds.evm.config import evm_chains
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


@dataclass
class Split:
    """The API process and the database the worker processes of a test share."""

    devnet: RunningDevnet
    database: str
    http: httpx.Client
    homes: Path

    def worker(self, name: str, lease: float) -> ServiceProcess:
        home = self.homes / name
        home.mkdir(exist_ok=True)
        settings = service_settings(
            home,
            self.devnet.deployment_path,
            database_url=self.database,
            worker_name=name,
            signer_lease_seconds=lease,
        )
        return ServiceProcess.workers_only(settings, ops_port=free_port())

    @contextmanager
    def two_workers(self, lease: float) -> Iterator[tuple[ServiceProcess, ServiceProcess]]:
        """Worker processes `a` (signing) and `b` (its standby, started once `a` signs)."""
        with ExitStack() as running:
            first = self.worker("a", lease).start()
            running.callback(first.stop)
            self.signed_by(first)
            standby = self.worker("b", lease).start()
            running.callback(standby.stop)
            assert self.signer() == first.pid  # the standby waits
            yield first, standby

    def signer(self) -> int | None:
        """The pid of the process whose lease on the solver key on the destination runs now."""
        solver = self.devnet.deployment.solver.address.lower()
        leases = rows_in(
            self.database,
            select(SignerLease).where(
                SignerLease.chain_id == DESTINATION, SignerLease.sender == solver
            ),
        )
        now = datetime.now(UTC)
        running = [lease for lease in leases if as_utc(lease.expires_at) > now]
        return int(running[0].holder.split(":")[1]) if running else None

    def signed_by(self, worker: ServiceProcess) -> float:
        """Seconds until `worker` holds the solver key's lease (at most a minute)."""
        started = time.monotonic()
        assert wait_for(lambda: self.signer() == worker.pid, timeout=60, interval=0.1), (
            worker.log_tail()
        )
        return time.monotonic() - started

    def deposited(self, orders: int) -> list[dict[str, Any]]:
        """`orders` native bridges, each by a user of its own, quoted and deposited."""
        users = [funded_user(self.devnet) for _ in range(orders)]
        quotes = [request_quote(self.http, native_bridge(user.address)) for user in users]
        for user, quote in zip(users, quotes, strict=True):
            amount = int(quote["details"]["currencyIn"]["amount"])
            deposit_native(self.devnet, user, quote, amount)
        return quotes

    def a_fill_signed(self, quotes: list[dict[str, Any]]) -> bool:
        return any(fills_journalled(self.database, quote_request_id(q)) for q in quotes)

    def each_filled_once(self, quotes: list[dict[str, Any]]) -> None:
        for quote in quotes:
            final = final_status(self.http, quote_request_id(quote), timeout=FILLED_WITHIN)
            assert final["status"] == "success", final
        destination = Web3(Web3.HTTPProvider(rpc_urls(self.devnet)[DESTINATION]))
        deployed = evm_chains(self.devnet.deployment)[1].contracts.filler
        filler = contract_at(destination, "Filler", deployed)
        fills = Counter(
            "0x" + event.args["orderId"].hex()
            for event in filler.events.OrderFilled().get_logs(from_block=0)
        )
        filled = [fills[quote["protocol"]["v2"]["orderId"]] for quote in quotes]
        assert filled == [1] * len(quotes)


@pytest.fixture
def split(
    start_service: StartService, devnet: RunningDevnet, postgres_url: str, tmp_path: Path
) -> Iterator[Split]:
    api = start_service(run_workers=False, settings={"database_url": postgres_url})
    with httpx.Client(base_url=api.base_url, timeout=10) as http:
        yield Split(devnet, postgres_url, http, tmp_path)


def test_a_killed_signer_s_standby_signs_within_the_lease_and_fills_nothing_twice(
    split: Split,
) -> None:
    with split.two_workers(SHORT_LEASE) as (first, standby):
        quotes = split.deposited(6)
        # Mid-flight: a fill signed, others perhaps not.
        assert wait_for(lambda: split.a_fill_signed(quotes), timeout=30, interval=0.05)
        first.kill()
        assert split.signed_by(standby) <= SHORT_LEASE + POLL_SLACK
        split.each_filled_once(quotes)


def test_a_graceful_stop_and_a_restart_after_a_crash_hand_the_key_over_at_once(
    split: Split,
) -> None:
    with split.two_workers(LONG_LEASE) as (first, standby):
        quotes = split.deposited(3)
        assert first.stop() == 0, first.log_tail()  # SIGTERM: its leases freed on the way out
        assert split.signed_by(standby) <= POLL_SLACK

        # Started again beside the signer, it stays the standby; the signer crashes and is
        # started again under its name: it signs at once, the standby still waiting.
        first.start()
        assert split.signer() == standby.pid
        quotes += split.deposited(3)
        standby.kill()
        standby.start()
        assert split.signed_by(standby) <= POLL_SLACK
        split.each_filled_once(quotes)
