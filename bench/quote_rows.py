"""SQLite's own work to store quotes' rows, on this build's schema beside the schema of an
earlier revision, in the same run: CPU per row of the inserts and commits the group commit
makes on the event loop (`store.group_commit`), nothing else.

Both databases are migrated from empty (one to `head`, one to `--baseline`), then filled with
the same `--rows` request rows, made by the quote code itself against the unit tests'
two-chain snapshot (`tests/support/quote_fixtures.py`: native and USDC bridges, their answers
stored as the service stores them). Then each round inserts `--batches` batches of `--batch`
new rows into each database in turn, each batch one `BEGIN IMMEDIATE` ... `COMMIT` on the
driver's connection with the service's pragmas, and takes the CPU time of that thread.
The rows' bind processing is done before the clock starts: it is the same for both schemas.
A table's indexes cost more as it grows, hence the fill. It prints each round, the best, and
the median of the rounds' ratios (the two schemas measured back to back).

Run: `.venv/bin/python -m bench.quote_rows [--rows 20000] [--batch 16] [--batches 200]
[--rounds 3] [--baseline 0023]`.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from bench.quote_cpu import quote_once, route_bodies
from crossfill.store import migrate
from crossfill.store.bulk_insert import SqliteBulkInsert
from crossfill.store.db import create_engine
from tests.support import quote_fixtures as fixtures

BRIDGES = ("native bridge", "USDC bridge")
Statements = list[tuple[str, list[tuple[Any, ...]]]]


def _quote_rows() -> Iterator[list[Any]]:
    """Each new quote's rows, as `app.quotes` stores them; bridges alternating."""
    config = fixtures.deployment()
    views = fixtures.views(config)
    bridges = route_bodies()
    bodies = [orjson.dumps(bridges[route]) for route in BRIDGES]
    while True:
        for raw in bodies:
            yield quote_once(raw, config, views)[1].inserts()


class _Batches:
    """Batches of new quote rows, bound as the group commit binds them."""

    def __init__(self) -> None:
        self._rows = _quote_rows()
        # The service's engine on a file (never opened): its dialect binds as the service does.
        engine = create_engine("sqlite+aiosqlite:///unused.db")
        self._insert = SqliteBulkInsert(engine.dialect)

    def next(self, size: int) -> Statements:
        rows = [row for _ in range(size) for row in next(self._rows)]
        return self._insert.statements(rows)


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None)
    for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON"):
        connection.execute(f"PRAGMA {pragma}")
    return connection


def _store(connection: sqlite3.Connection, statements: Statements) -> float:
    """One batch in one transaction; the thread's CPU seconds it took."""
    started = time.thread_time()
    connection.execute("BEGIN IMMEDIATE")
    for sql, parameters in statements:
        connection.executemany(sql, parameters)
    connection.execute("COMMIT")
    return time.thread_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=20_000, help="rows stored before measuring")
    parser.add_argument("--batch", type=int, default=16, help="rows per transaction")
    parser.add_argument("--batches", type=int, default=200, help="transactions per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", default="0023", help="the revision to compare with")
    args = parser.parse_args()
    batches = _Batches()
    with tempfile.TemporaryDirectory(prefix="crossfill-rows-") as home:
        schemas = {"head": Path(home, "head.db"), args.baseline: Path(home, "baseline.db")}
        for revision, path in schemas.items():
            migrate.upgrade(f"sqlite+aiosqlite:///{path}", revision=revision)
        connections = {revision: _connect(path) for revision, path in schemas.items()}
        for _ in range(args.rows // 500):
            fill = batches.next(500)
            for connection in connections.values():
                _store(connection, fill)
        for connection in connections.values():
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        print(
            f"SQLite insert+commit per row  rows before={args.rows} batch={args.batch} "
            f"batches={args.batches} rounds={args.rounds}"
        )
        per_round: dict[str, list[float]] = {revision: [] for revision in schemas}
        for _ in range(args.rounds):
            for revision, connection in connections.items():
                seconds = 0.0
                for _ in range(args.batches):
                    seconds += _store(connection, batches.next(args.batch))
                connection.execute("PRAGMA wal_checkpoint(PASSIVE)")
                per_round[revision].append(seconds / (args.batches * args.batch))
        for revision, per_row in per_round.items():
            print(
                f"schema at {revision:5s}  best {min(per_row) * 1e3:.3f} ms per row  "
                f"by round {' '.join(f'{s * 1e3:.3f}' for s in per_row)}"
            )
        ratios = [h / b for h, b in zip(per_round["head"], per_round[args.baseline], strict=True)]
        print(
            f"head / {args.baseline} by round: {' '.join(f'x{r:.2f}' for r in ratios)}  "
            f"median x{statistics.median(ratios):.2f}"
        )
        for connection in connections.values():
            connection.close()


if __name__ == "__main__":
    main()
