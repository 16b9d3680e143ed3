"""The service's CPU during a burst, by stage: py-spy samples the service's processes from the
deposits sent until every fill was seen (`python -m bench.burst --profile DIR`), and each
sample is put in the work it is part of (`CONTEXTS`: the loop or task of its outermost frame
that names one) and, within that, in what it was doing (`ACTIVITIES`: its innermost frame that
names one).

Run on its own over the raw files written (`python -m bench.burst_profile
DIR/burst-200-*.txt --orders 200`) it prints ms of CPU per order by work and activity."""

from __future__ import annotations

import argparse
import contextlib
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SAMPLES_PER_SECOND = 100

# Which work a sample is part of: the outermost frame naming one (the loop or task it runs
# in); (context, a substring of a frame "function (module path)"), first rule first.
CONTEXTS: tuple[tuple[str, str], ...] = (
    ("indexer: deposits recorded, judged, claimed", "crossfill/kinds/evm/indexer.py"),
    ("solver: fills signed (thread)", "_signed_rows"),
    ("solver: fill batches", "fill_tick (crossfill/kinds/evm/solver.py"),
    ("solver: fill batches", "Solver._fill_batch"),
    ("solver: fills recorded submitted", "Solver._submitted_all"),
    ("solver: fills followed until mined (receipts)", "track_tick (crossfill/kinds/evm/solver"),
    ("repayer (origin)", "crossfill/kinds/evm/repayer.py"),
    ("inventory view", "crossfill/app/inventory.py"),
    ("quotes, API", "crossfill/api/"),
    ("webhooks, websocket fan-out", "crossfill/workers/webhooks.py"),
    ("webhooks, websocket fan-out", "crossfill/events/"),
    ("deposit-address sweeper", "crossfill/kinds/evm/deposit_addresses.py"),
    ("SQLite WAL checkpoints (thread)", "crossfill/store/wal_checkpoints.py"),
    ("signer lease keeper", "crossfill/kinds/evm/signer_keeper.py"),
    ("heads: followers, subscriptions", "crossfill/kinds/evm/follower.py"),
    ("heads: followers, subscriptions", "crossfill/kinds/evm/head_subscription.py"),
    ("other workers", "crossfill/kinds/"),
    ("other workers", "crossfill/workers/"),
)
# Where no frame names one of those.
LAST_CONTEXTS: tuple[tuple[str, str], ...] = (
    ("event loop, transports", "asyncio/"),
    ("event loop, transports", "Runner.run"),
    ("HTTP server", "uvicorn/"),
    ("database, in SQLAlchemy's greenlets (caller not sampled)", "sqlalchemy/"),
)
# What a sample does: the innermost frame naming it, first rule first.
ACTIVITIES: tuple[tuple[str, str], ...] = (
    ("status writes, outbox", "publish (crossfill/store/requests.py"),
    ("status writes, outbox", "move (crossfill/store/requests.py"),
    ("status writes, outbox", "record_transaction (crossfill/store/requests.py"),
    ("status writes, outbox", "crossfill/store/outbox"),
    ("books postings", "crossfill/store/books.py"),
    ("signing", "eth_account/"),
    ("signing", "_signed_row"),
    ("deposit checks", "crossfill/kinds/evm/deposit_judge.py"),
    ("deposit checks", "crossfill/domain/deposit_checks"),
    ("log decoding", "crossfill/kinds/evm/depository_logs.py"),
    ("fill planning, encoding", "crossfill/app/fills.py"),
    ("fill planning, encoding", "crossfill/contracts/calldata"),
    ("fill planning, encoding", "crossfill/domain/fill_plan"),
    ("journal", "crossfill/kinds/evm/txmanager.py"),
    ("JSON-RPC", "crossfill/chains/"),
    ("JSON-RPC", "crossfill/kinds/evm/client.py"),
)
# Where no frame names one of those: the first rule that any frame matches.
LAST_ACTIVITIES: tuple[tuple[str, str], ...] = (
    ("ORM writes (flush)", "Session.flush"),
    ("commits", "commit (sqlalchemy/"),
    ("commits", "TransactionalContext.__exit__"),
    ("database", "sqlalchemy/"),
    ("database", "crossfill/store/"),
    ("database", "aiosqlite/"),
    ("database", "asyncpg/"),
)
# A thread waiting for work (py-spy does not always tell a thread blocked in C from a busy
# one): its samples are not CPU.
IDLE_LEAVES = frozenset(
    {
        "_connection_worker_thread (aiosqlite/core.py)",
        "Condition.wait (threading.py)",
        "_worker (concurrent/futures/thread.py)",
    }
)
OTHER = "other"


@dataclass(frozen=True)
class Breakdown:
    """Samples by work, and by activity within each."""

    samples: dict[str, Counter[str]]

    def total(self) -> float:
        """CPU seconds sampled."""
        return sum(c.total() for c in self.samples.values()) / SAMPLES_PER_SECOND


def _first(rules: tuple[tuple[str, str], ...], frames: list[str]) -> str:
    for frame in frames:
        for name, part in rules:
            if part in frame:
                return name
    return OTHER


def _any(rules: tuple[tuple[str, str], ...], frames: list[str]) -> str:
    for name, part in rules:
        if any(part in frame for frame in frames):
            return name
    return OTHER


def classify(frames: list[str]) -> tuple[str, str]:
    """A stack's (context, activity), its frames outermost first."""
    context = _first(CONTEXTS, frames)
    if context == OTHER:
        context = _first(LAST_CONTEXTS, frames)
    activity = _first(ACTIVITIES, frames[::-1])
    if activity == OTHER:
        activity = _any(LAST_ACTIVITIES, frames)
    return context, activity


def breakdown(paths: list[Path]) -> Breakdown:
    samples: dict[str, Counter[str]] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if not stack:
                continue
            frames = stack.split(";")
            if frames[-1] in IDLE_LEAVES:
                continue
            context, activity = classify(frames)
            samples.setdefault(context, Counter())[activity] += int(count)
    return Breakdown(samples)


def print_breakdown(found: Breakdown, orders: int, measured: float | None = None) -> None:
    """ms per order by work and activity; with the CPU seconds `measured` (/proc) meanwhile,
    the sampled shares of it (py-spy counts some waits as work: the shares are what holds)."""
    scale = 1.0 if measured is None or not found.total() else measured / found.total()

    def ms(samples: float) -> str:
        return f"{samples / SAMPLES_PER_SECOND * scale * 1000 / orders:.2f}"

    what = "sampled" if measured is None else "measured, in the sampled shares"
    total = found.total() * SAMPLES_PER_SECOND
    print(f"  service CPU {what}: {ms(total)} ms per order; by work (of which):")
    for context, by_activity in sorted(found.samples.items(), key=lambda item: -item[1].total()):
        parts = ", ".join(
            f"{activity} {ms(count)}" for activity, count in by_activity.most_common()
        )
        print(f"    {ms(by_activity.total()):>6} ms  {context} ({parts})")
    activities = sum(found.samples.values(), Counter[str]())
    parts = ", ".join(f"{activity} {ms(count)}" for activity, count in activities.most_common())
    print(f"  by activity, all work together: {parts}")


@contextlib.contextmanager
def sampled(pids: tuple[int, ...], directory: Path, name: str) -> Iterator[list[Path]]:
    """py-spy recording each of `pids` (raw stacks, `SAMPLES_PER_SECOND`) while in the block;
    the files written, once stopped."""
    directory.mkdir(parents=True, exist_ok=True)
    py_spy = Path(sys.executable).parent / "py-spy"
    paths = [directory / f"{name}-{pid}.txt" for pid in pids]
    recorders = [
        subprocess.Popen(
            [
                *(str(py_spy), "record", "--pid", str(pid), "--format", "raw", "--nolineno"),
                *("--rate", str(SAMPLES_PER_SECOND), "--output", str(path)),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for pid, path in zip(pids, paths, strict=True)
    ]
    try:
        yield paths
    finally:
        for recorder in recorders:
            recorder.send_signal(signal.SIGINT)
        for recorder in recorders:
            recorder.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("paths", type=Path, nargs="+", help="py-spy raw files of one burst")
    parser.add_argument("--orders", type=int, required=True, help="the burst's orders")
    parser.add_argument(
        "--measured-ms",
        type=float,
        help="the service's CPU per order measured meanwhile (bench.burst prints it): the "
        "breakdown in its sampled shares",
    )
    args = parser.parse_args()
    measured = None if args.measured_ms is None else args.measured_ms * args.orders / 1000
    print_breakdown(breakdown(args.paths), args.orders, measured)


if __name__ == "__main__":
    main()
