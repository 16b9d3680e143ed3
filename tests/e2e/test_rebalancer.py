"""The rebalancer on the devnet, with the peer deployment as its bridge: a chain whose solver
holds less ether than its minimum is refilled from the chain with surplus, the move arrives and
the books agree with both chains to the wei; a process killed (SIGKILL) between storing a
move's quote and sending it is resumed by the next, which sends one transaction; a move the
peer refuses (beyond its liquidity) is recorded failed and not asked for again; a bridge that
does not answer is tried again with backoff and shown in the metrics. The first two on SQLite
and PostgreSQL."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import tomli_w
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import select

from crossfill.devnet.anvil import set_native_balance
from crossfill.devnet.child_process import free_port
from crossfill.devnet.seed import ETHER
from crossfill.kinds.evm.config import evm_chain
from crossfill.store.tables import RebalanceMove, SentTransaction
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    OPERATOR,
    OPERATOR_TOKEN,
    ORIGIN,
    balance,
    final_status,
    funded_user,
    native_bridge,
    quote_request_id,
    request_quote,
    rpc_urls,
)
from tests.e2e.conftest import on_database
from tests.e2e.inventory_bridging import SOLVER
from tests.e2e.repaying import repaid_to_solver, repayments
from tests.support.block_mining import blocks_mined
from tests.support.database import rows_in
from tests.support.peers import RunningPeer, running_peer
from tests.support.service import ServiceProcess, service_settings
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps

INTERVAL = 0.5
BLOCK_SECONDS = 0.5
# The destination's levels in whole ether, and the origin's (it holds thousands: surplus).
SHORT_LEVELS = {"minimum": "5", "target": "20", "maximum": "100000"}
ORIGIN_LEVELS = {"minimum": "5", "target": "10", "maximum": "100000"}
# More than the peer's solver holds on the destination (1,000 ETH): the peer refuses it.
BEYOND_THE_PEER = {"minimum": "15000", "target": "15000", "maximum": "15000"}
DIPPED = 2 * ETHER


@pytest.fixture(scope="module")
def peer(devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningPeer]:
    with running_peer(devnet, tmp_path_factory.mktemp("peer")) as running:
        yield running


@pytest.fixture(autouse=True)
def blocks_go_on(devnet: RunningDevnet) -> Iterator[None]:
    """A block on each chain every BLOCK_SECONDS, as a live chain makes them, beside the blocks
    each transaction mines: a move's deposit gets deep enough for the peer to fill it."""
    with blocks_mined(*rpc_urls(devnet).values(), every=BLOCK_SECONDS):
        yield


@pytest.fixture
def dipped(devnet: RunningDevnet) -> Iterator[None]:
    """The main solver's ether on the destination set to 2 ETH (below its minimum) before the
    service starts on a new database (so the books open with it); given back afterwards."""
    rpc_url = _rpc(devnet, DESTINATION)
    held = balance(devnet, DESTINATION, NATIVE, SOLVER)
    set_native_balance(rpc_url, SOLVER, DIPPED)
    try:
        yield
    finally:
        set_native_balance(rpc_url, SOLVER, held)


def _rpc(devnet: RunningDevnet, chain_id: int) -> str:
    chain = evm_chain(devnet.deployment, chain_id)
    assert chain is not None
    return chain.rpc_url


def _service(
    devnet: RunningDevnet,
    home: Path,
    bridge_url: str,
    destination_levels: dict[str, str],
    database: str | None = None,
    *,
    origin_levels: dict[str, str] = ORIGIN_LEVELS,
    repayment: dict[str, Any] | None = None,
    **rebalancing: Any,
) -> ServiceProcess:
    """The main deployment with the rebalancer on (every INTERVAL), ether targets on both
    chains, its bridge at `bridge_url`, on a new database (`database`, or SQLite in `home`);
    `repayment`: its `[repayment]` section, if given."""
    document: dict[str, Any] = tomllib.loads(devnet.deployment_path.read_text())
    if repayment is not None:
        document["repayment"] = repayment
    document["rebalancing"] = {
        **document.get("rebalancing", {}),
        "bridge_url": bridge_url,
        "bridge_backoff_seconds": 0.2,
        "bridge_backoff_max_seconds": 1,
        "interval_seconds": INTERVAL,
        "targets": [
            {"chain_id": ORIGIN, "currency": NATIVE, **origin_levels},
            {"chain_id": DESTINATION, "currency": NATIVE, **destination_levels},
        ],
        **rebalancing,
    }
    path = home / "deployment.toml"
    path.write_text(tomli_w.dumps(document))
    settings = on_database(database, admin_token=OPERATOR_TOKEN)
    return ServiceProcess(service_settings(home, path, **settings))


def _moves(service: ServiceProcess) -> list[RebalanceMove]:
    return rows_in(service.database, select(RebalanceMove).order_by(RebalanceMove.id))


def _ended(service: ServiceProcess) -> bool:
    return any(move.status in ("arrived", "refunded", "failed") for move in _moves(service))


Labels = tuple[tuple[str, str], ...]


def _samples(service: ServiceProcess, name: str) -> dict[Labels, float]:
    """A series' samples, by their labels (sorted by name)."""
    scraped = text_string_to_metric_families(httpx.get(f"{service.base_url}/metrics").text)
    return {
        tuple(sorted(sample.labels.items())): sample.value
        for family in scraped
        for sample in family.samples
        if sample.name == name
    }


def _ready(service: ServiceProcess) -> dict[str, Any]:
    """`/readyz`: ready whatever the rebalancer finds (it is shown, not unready)."""
    response = httpx.get(f"{service.base_url}/readyz", timeout=10)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _trouble(service: ServiceProcess) -> dict[str, float]:
    """`crossfill_rebalance_trouble` of ether, by chain id."""
    return {
        dict(labels)["chain_id"]: value
        for labels, value in _samples(service, "crossfill_rebalance_trouble").items()
        if dict(labels)["currency"] == "ETH"
    }


def _status_messages(service: ServiceProcess) -> dict[int, str | None]:
    chains = httpx.get(f"{service.base_url}/chains", timeout=10).json()["chains"]
    return {chain["id"]: chain["statusMessage"] for chain in chains}


def _agrees(service: ServiceProcess) -> bool:
    """Every account on both chains agrees with its books to the wei, nothing unexplained."""
    answer = httpx.get(f"{service.base_url}/admin/books", headers=OPERATOR, timeout=30)
    assert answer.status_code == 200, answer.text
    books = answer.json()
    return not books["unexplained"] and all(
        row["difference"] == "0" for chain in books["chains"] for row in chain["reconciliation"]
    )


def _in_transit_out(service: ServiceProcess, chain_id: int) -> str:
    answer = httpx.get(f"{service.base_url}/admin/books", headers=OPERATOR, timeout=30).json()
    (chain,) = [chain for chain in answer["chains"] if chain["chainId"] == chain_id]
    (row,) = [row for row in chain["currencies"] if row["currency"] == NATIVE]
    return str(row["inTransit"])


def _arrived_once(devnet: RunningDevnet, service: ServiceProcess, started: float) -> RebalanceMove:
    """The one move toward the destination, arrived; the solver's balance there up by what
    arrived; the books to the wei on both chains, and nothing sent again."""
    assert wait_for(lambda: _ended(service), timeout=90), service.log_tail()
    refilled = time.monotonic() - started
    (move,) = _moves(service)
    assert move.status == "arrived", (move.status, move.reason, service.log_tail())
    assert (move.origin_chain_id, move.destination_chain_id) == (ORIGIN, DESTINATION)
    assert 17 * ETHER < int(move.amount) <= 18 * ETHER  # up to the target, 20 ETH
    assert 0 < int(move.amount_out) <= int(move.amount)
    assert balance(devnet, DESTINATION, NATIVE, SOLVER) == DIPPED + int(move.amount_out)
    assert wait_for(lambda: _agrees(service), timeout=60), service.log_tail()
    assert _in_transit_out(service, ORIGIN) == "0"
    time.sleep(6 * INTERVAL)
    assert len(_moves(service)) == 1  # counted once arrived: nothing sent twice
    assert move.sent_at is not None and move.ended_at is not None
    # What docs/treasury.md reports (`pytest -s` shows it).
    print(
        f"refilled {int(move.amount) / ETHER:.4f} ETH -> {int(move.amount_out) / ETHER:.6f} ETH:"
        f" service ready to arrived {refilled:.1f} s,"
        f" quote stored to arrived {(move.ended_at - move.created_at).total_seconds():.2f} s"
    )
    return move


@pytest.mark.usefixtures("dipped")
def test_a_chain_below_its_minimum_is_refilled_from_the_chain_with_surplus(
    devnet: RunningDevnet, peer: RunningPeer, tmp_path: Path, database: str | None
) -> None:
    service = _service(devnet, tmp_path, peer.base_url, SHORT_LEVELS, database)
    try:
        service.start()
        move = _arrived_once(devnet, service, time.monotonic())
        sent = _samples(service, "crossfill_rebalance_moves_total")
        outcomes = {dict(labels)["outcome"]: value for labels, value in sent.items()}
        assert outcomes == {"sent": 1, "arrived": 1}
        assert move.tx_hashes is not None and len(move.tx_hashes) == 1
    finally:
        service.stop()


@pytest.mark.usefixtures("dipped")
def test_a_move_stored_then_killed_before_it_is_sent_is_sent_once_by_the_next_process(
    devnet: RunningDevnet, peer: RunningPeer, tmp_path: Path, database: str | None
) -> None:
    service = _service(devnet, tmp_path, peer.base_url, SHORT_LEVELS, database)
    process = ["-m", "tests.e2e.rebalancer_process", str(tmp_path / "deployment.toml")]
    killed = subprocess.run(
        [sys.executable, *process, str(tmp_path), service.database],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parents[2],
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    (stored,) = _moves(service)
    assert stored.status == "quoted" and stored.quote is not None
    purpose = f"bridge:{stored.request_id}:"
    journal = select(SentTransaction).where(SentTransaction.purpose.startswith(purpose))
    assert rows_in(service.database, journal) == []  # nothing was sent
    try:
        service.start()
        move = _arrived_once(devnet, service, time.monotonic())
        assert move.id == stored.id
        (sent,) = rows_in(service.database, journal)  # one transaction, signed once
        assert move.tx_hashes == [sent.tx_hash]
    finally:
        service.stop()


def test_a_move_the_peer_refuses_is_recorded_and_not_asked_for_again(
    devnet: RunningDevnet, peer: RunningPeer, tmp_path: Path
) -> None:
    service = _service(devnet, tmp_path, peer.base_url, BEYOND_THE_PEER)
    try:
        service.start()
        assert wait_for(lambda: _ended(service), timeout=60), service.log_tail()
        time.sleep(6 * INTERVAL)
        (move,) = _moves(service)
        assert move.status == "failed" and move.request_id is None
        assert move.reason is not None and "INSUFFICIENT_LIQUIDITY" in move.reason
        failed = _samples(service, "crossfill_rebalance_moves_total")
        assert [dict(labels)["outcome"] for labels in failed] == ["failed"]
        assert _agrees(service)
        # Still below its minimum, its route refused: shown, the service still ready.
        assert wait_for(lambda: "rebalancing" in _ready(service)["checks"], timeout=10)
        shown = _ready(service)["checks"]["rebalancing"]
        assert list(shown) == [str(DESTINATION)] and list(shown[str(DESTINATION)]) == ["ETH"]
        assert shown[str(DESTINATION)]["ETH"].startswith(
            f"below its minimum; the move from chain {ORIGIN} was refused: refused by the bridge:"
        )
        assert "INSUFFICIENT_LIQUIDITY" in shown[str(DESTINATION)]["ETH"]
        assert _trouble(service) == {str(DESTINATION): 1, str(ORIGIN): 0}
        assert "cannot be refilled" in str(_status_messages(service)[DESTINATION])
        assert _status_messages(service)[ORIGIN] is None
    finally:
        service.stop()


def test_a_bridge_that_does_not_answer_is_tried_again_and_shown(
    devnet: RunningDevnet, tmp_path: Path
) -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    service = _service(
        devnet, tmp_path, closed, BEYOND_THE_PEER, bridge_attempts=1, stalled_after_seconds=1
    )
    labels: Labels = (
        ("currency", "ETH"),
        ("destination_chain_id", str(DESTINATION)),
        ("origin_chain_id", str(ORIGIN)),
    )
    try:
        service.start()
        assert wait_for(
            lambda: _samples(service, "crossfill_rebalance_unavailable").get(labels) == 1,
            timeout=30,
        ), service.log_tail()
        retried = "the bridge or a chain does not answer for a move; tried again"
        assert wait_for(lambda: service.log_tail(400).count(retried) >= 2, timeout=30)
        assert _moves(service) == []  # nothing quoted, nothing recorded
        # Silent beyond stalled_after_seconds: shown on /readyz, /chains and the metrics.
        assert wait_for(lambda: "rebalancing" in _ready(service)["checks"], timeout=20)
        (shown,) = _ready(service)["checks"]["rebalancing"][str(DESTINATION)].values()
        assert shown.startswith(
            f"the bridge or a chain has not answered for the move from chain {ORIGIN} for "
        )
        assert _trouble(service)[str(DESTINATION)] == 1
        assert "cannot be refilled" in str(_status_messages(service)[DESTINATION])
    finally:
        service.stop()


# Batch rules that alone would hold every deposit for an hour: a batch of 100, worth a
# million dollars, or an hour old.
HOLDING_BATCHES = {"batch_size": 100, "max_age_seconds": 3600, "min_batch_value_usd": "1000000"}
# The origin short of its target (20) but above its minimum (1) with what it is owed: steered,
# never refilled; the destination above its target, below its maximum: nothing to drain.
STEERED_LEVELS = {"minimum": "1", "target": "20", "maximum": "100000"}
CALM_LEVELS = {"minimum": "1", "target": "5", "maximum": "100000"}
BRIDGED = 5 * 10**17


def test_a_chain_short_of_its_target_is_repaid_its_owed_deposits_at_once_before_any_move(
    devnet: RunningDevnet, peer: RunningPeer, tmp_path: Path
) -> None:
    origin_rpc = _rpc(devnet, ORIGIN)
    held = balance(devnet, ORIGIN, NATIVE, SOLVER)
    set_native_balance(origin_rpc, SOLVER, 3 * ETHER)
    service = _service(
        devnet, tmp_path, peer.base_url, CALM_LEVELS, origin_levels=STEERED_LEVELS,
        repayment=HOLDING_BATCHES,
    )  # fmt: skip
    user = funded_user(devnet)
    try:
        service.start()
        with httpx.Client(base_url=service.base_url, timeout=10) as http:
            quotes = [request_quote(http, native_bridge(user.address, amount=str(BRIDGED)))]
            quotes.append(request_quote(http, native_bridge(user.address, amount=str(BRIDGED))))
            for quote in quotes:
                execute_steps(quote, user, rpc_urls(devnet))
            for quote in quotes:
                assert final_status(http, quote_request_id(quote), timeout=60)["status"] == (
                    "success"
                )
        filled = time.monotonic()
        payouts = [
            repaid_to_solver(devnet, service.database, quote_request_id(quote)) for quote in quotes
        ]
        waited = time.monotonic() - filled
        # Repaid at once, the batch rules' hour notwithstanding: each deposit whole, once.
        assert waited < 60, waited
        assert sorted(payout.amount for payout in payouts) == [BRIDGED, BRIDGED]
        assert {row.state for row in repayments(service.database)} == {"repaid"}
        time.sleep(6 * INTERVAL)
        # Owed deposits lifted the origin above its minimum: no bridge move was ever made.
        assert _moves(service) == []
        assert _samples(service, "crossfill_rebalance_moves_total") == {}
        print(f"two owed deposits repaid {waited:.1f} s after their fills were final")
    finally:
        service.stop()
        set_native_balance(origin_rpc, SOLVER, held)
