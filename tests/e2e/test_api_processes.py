"""`crossfill run --api-processes 2` on PostgreSQL: two processes share the port, a quote
answered by either is known to both (and counted in the metrics either one serves), a replica
that dies comes back, and a replica whose main process is killed outright lets the port go."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from eth_account import Account
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import RunningDevnet
from tests.e2e.bridging import ORIGIN, native_bridge, request_quote, usdc
from tests.support.service import ServiceProcess, service_settings
from tests.support.waiting import wait_for

CONNECTIONS = 16


@pytest.fixture
def service(tmp_path: Path, devnet: RunningDevnet, postgres_url: str) -> Iterator[ServiceProcess]:
    settings = service_settings(
        tmp_path,
        devnet.deployment_path,
        database_url=postgres_url,
        prometheus_multiproc_dir=tmp_path / "metrics",
    )
    process = ServiceProcess(settings, options=["--api-processes", "2"])
    process.start()
    yield process
    process.stop()


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def _established_on(port: int) -> set[str]:
    """Socket inodes of established TCP connections to `port` on this host (IPv4)."""
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local_port = int(fields[1].split(":")[1], 16)
        if local_port == port and fields[3] == "01":  # 01: ESTABLISHED
            inodes.add(fields[9])
    return inodes


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = os.readlink(fd) if fd.is_symlink() else ""
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    return inodes


def _quote(client: httpx.Client, **fields: Any) -> dict[str, Any]:
    return request_quote(client, native_bridge(Account.create().address, **fields))


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _replica(service: ServiceProcess) -> int:
    assert service.process is not None
    replicas = _children(service.process.pid)
    assert len(replicas) == 1, replicas
    return replicas[0]


def test_both_processes_serve_and_share_what_they_store(
    service: ServiceProcess, devnet: RunningDevnet
) -> None:
    assert service.process is not None
    main, replica = service.process.pid, _replica(service)
    clients = [httpx.Client(base_url=service.base_url, timeout=30) for _ in range(CONNECTIONS)]
    # Right after the start, half of them same-chain swaps: a process serves only once it has
    # read the pools (a replica used to answer these 400 NO_SWAP_ROUTES_FOUND at first).
    swap = {
        "destinationChainId": ORIGIN,
        "originCurrency": usdc(devnet, ORIGIN),
        "amount": "25000000",
    }
    try:
        with ThreadPoolExecutor(CONNECTIONS) as pool:
            quotes = list(
                pool.map(
                    lambda n: _quote(clients[n], **(swap if n % 2 else {})), range(CONNECTIONS)
                )
            )
        # Each client keeps its connection open: the kernel gave each to one process.
        served = _established_on(service.port)
        assert served & _socket_inodes(main), "the main process served no connection"
        assert served & _socket_inodes(replica), "the replica served no connection"
        # Whichever process stored a quote, any process finds it.
        for quote, client in zip(quotes, clients, strict=True):
            request_id = quote["steps"][0]["requestId"]
            status = client.get("/intents/status/v3", params={"requestId": request_id})
            assert status.status_code == 200
            assert status.json()["status"] == "waiting"
    finally:
        for client in clients:
            client.close()


def _quotes_answered(scrape: httpx.Response) -> float:
    assert scrape.status_code == 200, scrape.text
    return sum(
        sample.value
        for family in text_string_to_metric_families(scrape.text)
        for sample in family.samples
        if sample.name == "crossfill_quote_duration_seconds_count"
        and sample.labels["outcome"] == "ok"
    )


def test_either_process_scraped_counts_the_quotes_both_answered(
    service: ServiceProcess,
) -> None:
    assert service.process is not None
    main, replica = service.process.pid, _replica(service)
    clients = [httpx.Client(base_url=service.base_url, timeout=30) for _ in range(CONNECTIONS)]
    try:
        with ThreadPoolExecutor(CONNECTIONS) as pool:
            list(pool.map(lambda n: _quote(clients[n]), range(CONNECTIONS)))
        served = _established_on(service.port)
        assert served & _socket_inodes(main) and served & _socket_inodes(replica)
        # Each client asks on its own connection, so both processes answer these scrapes.
        for client in clients:
            assert _quotes_answered(client.get("/metrics")) == CONNECTIONS
    finally:
        for client in clients:
            client.close()


def test_a_replica_that_dies_is_replaced(service: ServiceProcess) -> None:
    assert service.process is not None
    main, replica = service.process.pid, _replica(service)
    os.kill(replica, signal.SIGKILL)
    assert wait_for(
        lambda: [pid for pid in _children(main) if pid != replica and _running(pid)] != [],
        timeout=60,
        interval=0.2,
    ), "the replica was not started again"
    with httpx.Client(base_url=service.base_url, timeout=30) as client:
        _quote(client)


def test_a_replica_stops_when_its_main_process_is_killed(service: ServiceProcess) -> None:
    replica = _replica(service)
    service.kill()
    assert wait_for(lambda: not _running(replica), timeout=30, interval=0.2), (
        "the orphaned replica kept running"
    )
