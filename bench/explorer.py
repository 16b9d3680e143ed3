"""The explorer's pages beside the v3 listing, on a database of 10,000 requests: latency
(p50/p99) and the service's CPU per page, its main thread's (where the event loop runs) apart.

Seeds synthetic requests (with the quote fixture's record, status events for the requests it
opens) into the database of `crossfill devnet`, then times, one request at a time, in rounds
that alternate the endpoints (so the machine's drift falls on each alike):

- `GET /requests/v3?limit=20` with an API key: the baseline, the endpoint's own figure;
- `GET /explorer`: the list page (newest first, 20 rows);
- `GET /explorer?status=…&origin=…`: the list page filtered;
- `GET /explorer/requests/{id}`: a request's page (its record, timeline, fees).

Run: `.venv/bin/python -m bench.explorer [--rows 10000] [--requests 400] [--rounds 4]
[--database sqlite|postgres]`.
"""

from __future__ import annotations

import argparse
import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import uvloop
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.common import (
    Call,
    RunningService,
    cpu_seconds,
    database_for,
    devnet_service,
    load,
    report,
)
from crossfill.quoting.response import quote_wire
from crossfill.settings import Settings
from crossfill.store import api_keys
from crossfill.store.db import session_factory
from crossfill.store.requests import STATUS_EVENT
from crossfill.store.tables import OutboxEvent
from tests.support import quote_fixtures as fx
from tests.support.database import engine_of
from tests.support.synthetic import SyntheticSet, insert_synthetic, synthetic_requests

OPENED = 200  # requests whose pages are opened (each given its status events)
_MOVES = {
    "success": ("waiting", "pending", "submitted", "success"),
    "refund": ("waiting", "failure", "refund"),
    "failure": ("waiting", "pending", "submitted", "failure"),
    "submitted": ("waiting", "pending", "submitted"),
    "pending": ("waiting", "pending"),
}


@dataclass(frozen=True)
class Seeded:
    api_key: str
    opened: list[str]
    filter_params: str


def _events(data: SyntheticSet, opened: list[dict[str, Any]]) -> list[dict[str, Any]]:
    events = []
    for row in opened:
        for step, status in enumerate(_MOVES.get(row["status"], ("waiting",))):
            events.append(
                {
                    "request_id": row["id"],
                    "event": STATUS_EVENT,
                    "payload": {"status": status, "requestId": row["id"]},
                    "created_at": row["created_at"] + timedelta(seconds=step),
                }
            )
    return events


async def _seed(engine: AsyncEngine, rows: int) -> Seeded:
    quote = quote_wire(fx.quote(fx.body()), allowance=None, user_balance=None)
    data = synthetic_requests(rows, quote=quote, start=datetime.now(UTC) - timedelta(days=1))
    opened = random.Random(3).sample(data.requests, OPENED)
    async with engine.begin() as connection:
        await insert_synthetic(connection, data)
        await connection.execute(insert(OutboxEvent), _events(data, opened))
    async with session_factory(engine)() as session:
        created = await api_keys.create(session, "bench", now=datetime.now(UTC))
        await session.commit()
    first = data.requests[0]
    filtered = f"status={first['status']}&origin={first['origin_chain_id']}"
    return Seeded(created.secret, [row["id"] for row in opened], filtered)


@dataclass
class Measured:
    latencies: list[float] = field(default_factory=list)
    cpu: float = 0.0
    main_thread: float = 0.0

    def line(self, label: str) -> str:
        pages = len(self.latencies)
        per_page = f"cpu={self.cpu / pages * 1000:.2f} ms/page"
        main = f"main_thread={self.main_thread / pages * 1000:.2f} ms/page"
        return f"{report(label, self.latencies)}  {per_page}  {main}"


async def _measure(
    service: RunningService,
    database_url: str | None,
    calls: dict[str, Callable[[int], Call]],
    *,
    requests: int,
    rounds: int,
) -> dict[str, Measured]:
    found = {name: Measured() for name in calls}
    for calls_of in calls.values():  # warm-up: templates compiled, caches filled
        await load(service.base_url, calls_of, requests=20, concurrency=1)
    for _ in range(rounds):
        for name, calls_of in calls.items():
            before = cpu_seconds(service, database_url)
            latencies, _elapsed = await load(
                service.base_url, calls_of, requests=requests // rounds, concurrency=1
            )
            after = cpu_seconds(service, database_url)
            measured = found[name]
            measured.latencies += latencies
            used = after.since(before)
            measured.cpu += used["service"]
            measured.main_thread += used["main_thread"]
    return found


def _calls(seeded: Seeded) -> dict[str, Callable[[int], Call]]:
    keyed = (("x-api-key", seeded.api_key),)
    opened = seeded.opened
    return {
        "GET /requests/v3?limit=20 (baseline)": lambda _i: Call(
            "GET", "/requests/v3?limit=20", headers=keyed
        ),
        "GET /explorer": lambda _i: Call("GET", "/explorer"),
        "GET /explorer?status&origin": lambda _i: Call("GET", f"/explorer?{seeded.filter_params}"),
        "GET /explorer/requests/{id}": lambda i: Call(
            "GET", f"/explorer/requests/{opened[i % len(opened)]}"
        ),
    }


async def _seed_into(service: RunningService, database_url: str | None, rows: int) -> Seeded:
    url = database_url or Settings(home=service.home).database
    async with engine_of(url) as engine:
        return await _seed(engine, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=400, help="per endpoint")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    args = parser.parse_args()
    with (
        database_for(args.database) as database_url,
        devnet_service(database_url=database_url) as service,
    ):
        seeded = asyncio.run(_seed_into(service, database_url, args.rows))
        found = uvloop.run(
            _measure(
                service, database_url, _calls(seeded), requests=args.requests, rounds=args.rounds
            )
        )
    print(f"{args.rows:,} requests, {args.database}, one request at a time, {args.rounds} rounds")
    for label, measured in found.items():
        print(measured.line(label))


if __name__ == "__main__":
    main()
