"""Webhook delivery: status change → delivery latency (p50/p99) and deliveries per second.

A local receiver (uvicorn, its own process) logs each delivery's arrival. The dispatcher runs
as in `crossfill run`, on SQLite (default) or PostgreSQL (`--postgres`). Two phases:
- latency: status changes published one at a time at a steady rate; arrival minus commit time;
- throughput: a burst of events already committed; deliveries per second until all arrived.
With `--tls` the receiver serves https with a certificate from a test authority (`trustme`)
that the dispatcher is told to trust (`SSL_CERT_FILE`): each delivery then pays what a
production one does for its connection, the handshake included.
Run: `.venv/bin/python -m bench.webhooks [--latency-events 300] [--burst 5000] [--tls]`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import trustme
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bench.common import report
from crossfill.config.webhook_secret import SigningKeyBox
from crossfill.devnet.child_process import free_port
from crossfill.metrics import Metrics
from crossfill.settings import Settings
from crossfill.store import api_keys, requests, webhook_endpoints
from crossfill.store.tables import Request
from crossfill.workers.webhooks import WebhookDispatcher
from tests.support.database import sessions_of, throwaway_postgres
from tests.support.synthetic import insert_synthetic, synthetic_requests


def _start_receiver(log: Path, tls: Path | None) -> tuple[subprocess.Popen[bytes], str]:
    """The receiver, over https when `tls` is a folder to hold its certificate (the
    authority's certificate, `ca.pem`, is what the dispatcher must trust)."""
    port = free_port()
    env = {**os.environ, "CROSSFILL_BENCH_RECEIVER_LOG": str(log)}
    options = []
    scheme = "http"
    verify: bool | str = True
    if tls is not None:
        authority = trustme.CA()
        authority.cert_pem.write_to_path(str(tls / "ca.pem"))
        issued = authority.issue_cert("127.0.0.1")
        issued.private_key_pem.write_to_path(str(tls / "key.pem"))
        issued.cert_chain_pems[0].write_to_path(str(tls / "cert.pem"))
        options = ["--ssl-keyfile", str(tls / "key.pem"), "--ssl-certfile", str(tls / "cert.pem")]
        scheme, verify = "https", str(tls / "ca.pem")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "bench.webhook_receiver:app",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
            *options,
        ],
        env=env,
    )
    url = f"{scheme}://127.0.0.1:{port}/hooks"
    for _ in range(100):
        try:
            httpx.post(url, timeout=1, verify=verify)
            return process, url
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("receiver did not start")


def _arrivals(log: Path) -> dict[int, float]:
    arrived: dict[int, float] = {}
    for line in log.read_text().splitlines():
        event_id, at = line.split()
        if event_id.isdigit():
            arrived.setdefault(int(event_id), float(at))
    return arrived


async def _setup(
    sessions: async_sessionmaker[AsyncSession], settings: Settings, url: str, rows: int
) -> list[Request]:
    async with sessions() as session, session.begin():
        created = await api_keys.create(session, "bench", now=datetime.now(UTC))
        await webhook_endpoints.put(
            session,
            created.row.id,
            url=url,
            headers={},
            encrypted_key=SigningKeyBox.from_settings(settings).seal(created.secret),
            now=datetime.now(UTC),
        )
    data = synthetic_requests(rows, api_key_ids=(created.row.id,))
    async with sessions() as session, session.begin():
        await insert_synthetic(await session.connection(), data)
    async with sessions() as session:
        return [r for r in [await requests.get(session, row["id"]) for row in data.requests] if r]


async def _publish(
    sessions: async_sessionmaker[AsyncSession], request: Request
) -> tuple[int, float]:
    """One status event for `request`; its id and when it was committed."""
    async with sessions() as session, session.begin():
        row = await requests.get(session, request.id)
        assert row is not None
        event = await requests.publish(session, row, now=datetime.now(UTC))
    return event.id, time.time()


async def _wait_for(log: Path, ids: set[int], seconds: float) -> dict[int, float]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        arrived = _arrivals(log)
        if ids <= arrived.keys():
            return arrived
        await asyncio.sleep(0.05)
    raise RuntimeError(f"only {len(ids & _arrivals(log).keys())} of {len(ids)} arrived")


async def run(database_url: str, home: Path, latency_events: int, burst: int, *, tls: bool) -> None:
    settings = Settings(home=home, database_url=database_url)
    async with sessions_of(database_url, migrated=True) as sessions:
        await _measure(sessions, settings, latency_events, burst, tls=tls)


async def _measure(
    sessions: async_sessionmaker[AsyncSession],
    settings: Settings,
    latency_events: int,
    burst: int,
    *,
    tls: bool,
) -> None:
    home = settings.home
    log = home / "arrivals.log"
    log.touch()
    metrics = Metrics()
    receiver, url = _start_receiver(log, home if tls else None)
    if tls:  # read by the dispatcher's HTTP client when it is made
        os.environ["SSL_CERT_FILE"] = str(home / "ca.pem")
    dispatcher = WebhookDispatcher(
        sessions,
        settings,
        now=lambda: datetime.now(UTC),
        interval_seconds=settings.worker_interval_seconds,
        metrics=metrics,
    )
    task = asyncio.create_task(dispatcher.run())
    try:
        pool = await _setup(sessions, settings, url, max(latency_events, burst))
        latencies = []
        for request in pool[:latency_events]:
            event_id, committed = await _publish(sessions, request)
            arrived = await _wait_for(log, {event_id}, 10)
            latencies.append(arrived[event_id] - committed)
            await asyncio.sleep(0.01)
        print(report("status change -> delivery", latencies))
        task.cancel()  # the burst waits, already committed, for a fresh dispatcher
        await asyncio.gather(task, return_exceptions=True)
        ids = {(await _publish(sessions, request))[0] for request in pool[:burst]}
        started = time.time()
        dispatcher = WebhookDispatcher(
            sessions,
            settings,
            now=lambda: datetime.now(UTC),
            interval_seconds=settings.worker_interval_seconds,
            metrics=metrics,
        )
        task = asyncio.create_task(dispatcher.run())
        arrived = await _wait_for(log, ids, 300)
        elapsed = max(arrived[i] for i in ids) - started
        print(
            f"burst of {burst} queued events: delivered in {elapsed:.1f} s "
            f"-> {burst / elapsed:.0f} deliveries/s"
        )
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        receiver.terminate()
        receiver.wait(10)


async def main_async(postgres: bool, latency_events: int, burst: int, *, tls: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="crossfill-bench-") as home:
        if not postgres:
            url = f"sqlite+aiosqlite:///{home}/bench.db"
            await run(url, Path(home), latency_events, burst, tls=tls)
            return
        async with throwaway_postgres("crossfill_bench") as url:
            await run(url, Path(home), latency_events, burst, tls=tls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency-events", type=int, default=300)
    parser.add_argument("--burst", type=int, default=5000)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--tls", action="store_true", help="the receiver serves https")
    args = parser.parse_args()
    asyncio.run(main_async(args.postgres, args.latency_events, args.burst, tls=args.tls))


if __name__ == "__main__":
    main()
