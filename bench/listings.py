"""GET /requests/v3 queries on a large PostgreSQL table: p50/p99 per typical query, and EXPLAIN.

Seeds synthetic requests (default 1,000,000) into a throwaway database, then times each query
as the listing endpoint runs it (compiled statement + the page's transactions), and prints the
plan's top nodes to show index use. The database is dropped at the end unless --keep.
Run: `.venv/bin/python -m bench.listings [--rows 1000000] [--repeat 200]`.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import text
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.common import report
from crossfill.domain.listing_query import ListingQuery, parse_listing
from crossfill.store import listing
from crossfill.store.db import session_factory
from tests.support.database import engine_of, throwaway_postgres
from tests.support.synthetic import insert_synthetic, synthetic_requests

SEED_BATCH = 50_000


async def _seed(engine: AsyncEngine, rows: int) -> dict[str, str]:
    """Insert in batches (each its own generator seed); returns sample values to query by."""
    sample: dict[str, str] = {}
    started = time.perf_counter()
    for batch, offset in enumerate(range(0, rows, SEED_BATCH)):
        data = synthetic_requests(min(SEED_BATCH, rows - offset), seed=batch, wallets=20_000)
        if not sample:
            sample = {
                "user": data.requests[0]["user_address"],
                "hash": data.transactions[0]["tx_hash"],
            }
        async with engine.begin() as connection:
            await insert_synthetic(connection, data)
        print(f"  seeded {offset + len(data.requests):,} rows", end="\r", flush=True)
    async with engine.begin() as connection:
        await connection.execute(text("ANALYZE"))
    print(f"\nseeded {rows:,} requests in {time.perf_counter() - started:.0f} s")
    return sample


def _queries(sample: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    filters = [{"status": "refund", "originChainId": 10}, {"status": "failure", "chainId": 8453}]
    return {
        "by user": {"user": [sample["user"]]},
        "by hash via term": {"term": [sample["hash"]]},
        "status + chain": {"status": ["success"], "originChainId": ["1"]},
        "filters: OR of two groups": {"filters": [json.dumps(filters)]},
        "sorted by amountUsd": {"sortBy": ["amountUsd"], "sortDirection": ["desc"]},
        "newest first, limit 50": {"limit": ["50"]},
    }


async def _run_listing(engine: AsyncEngine, query: ListingQuery) -> str | None:
    async with session_factory(engine)() as session:
        rows, continuation = await listing.page(session, query)
        await listing.transactions_by_request(session, [row.id for row in rows])
    return continuation


async def _deep_cursor(engine: AsyncEngine, pages: int) -> str:
    """The continuation after `pages` pages of 50: where deep paging starts."""
    token: str | None = None
    for _ in range(pages):
        extra = {"continuation": [token]} if token else {}
        token = await _run_listing(engine, parse_listing({"limit": ["50"], **extra}))
        assert token is not None
    assert token is not None
    return token


async def _time(call: Callable[[], Awaitable[Any]], repeat: int) -> list[float]:
    await call()  # warm
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        await call()
        seconds.append(time.perf_counter() - started)
    return seconds


async def _explain(engine: AsyncEngine, query: ListingQuery) -> str:
    statement = listing.page_statement(query).compile(
        dialect=postgresql.dialect(),  # type: ignore[no-untyped-call]
        compile_kwargs={"literal_binds": True},
    )
    async with engine.connect() as connection:
        plan = await connection.execute(text(f"EXPLAIN {statement}"))
        lines = [row[0] for row in plan]
    return " | ".join(line.strip() for line in lines[:4])


async def main_async(rows: int, repeat: int, keep: bool) -> None:
    async with (
        throwaway_postgres("crossfill_bench", keep=keep) as url,
        engine_of(url, migrated=True) as engine,
    ):
        sample = await _seed(engine, rows)
        queries = _queries(sample)
        depth = max(1, min(40, rows // 50 - 1))
        queries[f"deep paging (page {depth})"] = {
            "limit": ["50"],
            "continuation": [await _deep_cursor(engine, depth)],
        }
        for label, params in queries.items():
            query = parse_listing(params)
            seconds = await _time(functools.partial(_run_listing, engine, query), repeat)
            print(report(label, seconds))
            print("    plan:", await _explain(engine, query))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    asyncio.run(main_async(args.rows, args.repeat, args.keep))


if __name__ == "__main__":
    main()
