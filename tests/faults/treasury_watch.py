"""What the skewed soak watches of the operator's treasury while it runs: the solver's inventory
per (chain, currency) read every second from the service's metrics
(`crossfill_solver_inventory`: balance, committed, free, owed, and whatever other parts the
service exports, in transit among them), and the books (`GET /admin/books`) at checkpoints;
then, per (chain, currency), when free inventory dipped below its minimum and how long it took
to be back above it."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

INVENTORY_METRIC = "crossfill_solver_inventory"
# (chain id, currency symbol)
Holding = tuple[int, str]


@dataclass(frozen=True)
class Sample:
    """The inventory the service showed at `at` (seconds since the run began): per holding,
    part (balance, committed, free, owed, ...) → whole units."""

    at: float
    parts: dict[Holding, dict[str, Decimal]]


@dataclass(frozen=True)
class Checkpoint:
    """The books read at `at`, after `sent` intents: per (chain, currency), the unexplained
    difference (the sum of its accounts' differences no cause explains, in the smallest unit,
    by magnitude), and the inventory shown then."""

    at: float
    sent: int
    unexplained: dict[Holding, int]
    causes: list[str]
    inventory: dict[Holding, dict[str, Decimal]]
    # What the books say of each (chain, currency): owed to users and to the solver, fees,
    # gas, and whatever else they show (in transit, with a rebalancer), in the smallest unit.
    books: dict[Holding, dict[str, str]] = field(default_factory=dict)

    def document(self) -> dict[str, Any]:
        return {
            "atSeconds": round(self.at, 1),
            "intentsSent": self.sent,
            "unexplained": {
                f"{chain}:{symbol}": amount
                for (chain, symbol), amount in sorted(self.unexplained.items())
            },
            "unexplainedCauses": self.causes,
            "inventory": {
                f"{chain}:{symbol}": {part: str(amount) for part, amount in parts.items()}
                for (chain, symbol), parts in sorted(self.inventory.items())
            },
            "books": {
                f"{chain}:{symbol}": figures for (chain, symbol), figures in self.books.items()
            },
        }


def figures_of(books: Mapping[str, Any]) -> dict[Holding, dict[str, str]]:
    """Per (chain, currency) of a `GET /admin/books` answer, its figures (amounts as given)."""
    return {
        (int(chain["chainId"]), entry["symbol"]): {
            name: str(value) for name, value in entry.items() if name not in {"currency", "symbol"}
        }
        for chain in books["chains"]
        for entry in chain["currencies"]
    }


def inventory_of(metrics_text: str) -> dict[Holding, dict[str, Decimal]]:
    """The solver's inventory in a `/metrics` answer."""
    found: dict[Holding, dict[str, Decimal]] = {}
    for family in text_string_to_metric_families(metrics_text):
        if family.name != INVENTORY_METRIC:
            continue
        for sample in family.samples:
            labels = sample.labels
            holding = (int(labels["chain_id"]), labels["currency"])
            found.setdefault(holding, {})[labels["part"]] = Decimal(str(sample.value))
    return found


def unexplained_of(books: Mapping[str, Any]) -> tuple[dict[Holding, int], list[str]]:
    """Per (chain, currency) of a `GET /admin/books` answer, what its reconciliation leaves
    unexplained over every account (by magnitude, in the smallest unit: wei for ETH), and each
    unexplained account named (chain, account, currency, amount, cause)."""
    found: dict[Holding, int] = {}
    causes: list[str] = []
    for chain in books["chains"]:
        for row in chain["reconciliation"]:
            holding = (int(chain["chainId"]), row["symbol"])
            amount = int(row["unexplained"])
            found[holding] = found.get(holding, 0) + abs(amount)
            if amount:
                causes.append(
                    f"{chain['chainId']} {row['account']} {row['symbol']}: {amount}"
                    f" ({row.get('unexplainedCause')})"
                )
    return found, causes


@dataclass
class TreasuryWatch:
    """Samples the inventory every `interval` seconds and reads the books when asked
    (`checkpoint`), against whichever process serves `base_url()` now (it may be restarting:
    a sample it cannot take is skipped, a checkpoint is tried again)."""

    base_url: Callable[[], str]
    operator_token: str
    sent: Callable[[], int]
    interval: float = 1.0
    started: float = field(default_factory=time.monotonic)
    samples: list[Sample] = field(default_factory=list)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    # Held while the books are read: whoever kills the service takes it first.
    service_lock: threading.Lock = field(default_factory=threading.Lock)

    def now(self) -> float:
        return time.monotonic() - self.started

    def sample(self) -> dict[Holding, dict[str, Decimal]] | None:
        try:
            answer = httpx.get(f"{self.base_url()}/metrics", timeout=20)
        except httpx.HTTPError:
            return None
        if answer.status_code != 200:
            return None
        found = inventory_of(answer.text)
        # A process just started publishes nothing until it has read the balances.
        if not found or any("free" not in parts for parts in found.values()):
            return None
        self.samples.append(Sample(self.now(), found))
        return found

    def checkpoint(self, timeout: float = 300) -> Checkpoint:
        """The books read now (the service not killed meanwhile; tried again while it starts
        or a chain lags)."""
        deadline = time.monotonic() + timeout
        while True:
            with self.service_lock:
                try:
                    answer = httpx.get(
                        f"{self.base_url()}/admin/books",
                        headers={"Authorization": f"Bearer {self.operator_token}"},
                        timeout=60,
                    )
                    if answer.status_code == 200:
                        break
                    failure = f"{answer.status_code} {answer.text[:300]}"
                except httpx.HTTPError as exc:
                    failure = repr(exc)
            if time.monotonic() > deadline:
                raise RuntimeError(f"the books could not be read: {failure}")
            time.sleep(1)
        books = answer.json()
        unexplained, causes = unexplained_of(books)
        inventory = self.samples[-1].parts if self.samples else {}
        checkpoint = Checkpoint(
            self.now(), self.sent(), unexplained, causes, inventory, figures_of(books)
        )
        self.checkpoints.append(checkpoint)
        return checkpoint

    def start(self, checkpoint_every: int) -> None:
        """Watch in a thread of its own until `finish`."""
        self.thread = threading.Thread(target=self.run, args=(checkpoint_every,), daemon=True)
        self.thread.start()

    def finish(self) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join(120)

    def run(self, checkpoint_every: int) -> None:
        """Sample until stopped; read the books each time `checkpoint_every` more intents
        were sent."""
        next_mark = checkpoint_every
        while not self.stop.is_set():
            self.sample()
            if self.sent() >= next_mark:
                try:
                    self.checkpoint()
                except RuntimeError as exc:  # reported: fewer checkpoints than asked for
                    print(exc)
                next_mark += checkpoint_every
            self.stop.wait(self.interval)


@dataclass(frozen=True)
class Dips:
    """A holding's time below its minimum of free inventory: each dip's start and, once back
    above, how long it lasted (None: still below at the end)."""

    minimum: Decimal
    dips: list[tuple[float, float | None]]

    def document(self) -> dict[str, Any]:
        back = [seconds for _, seconds in self.dips if seconds is not None]
        return {
            "minimum": str(self.minimum),
            "dips": len(self.dips),
            "firstDipAtSeconds": round(self.dips[0][0], 1) if self.dips else None,
            "backAboveMinimumSeconds": {
                "max": round(max(back), 1) if back else None,
                "p50": round(statistics.median(back), 1) if back else None,
            },
            "stillBelowAtEnd": any(seconds is None for _, seconds in self.dips),
        }


def dips_below(samples: list[Sample], holding: Holding, minimum: Decimal) -> Dips:
    """Every dip of `holding`'s free inventory below `minimum` in `samples`."""
    dips: list[tuple[float, float | None]] = []
    began: float | None = None
    for sample in samples:
        parts = sample.parts.get(holding)
        if parts is None:
            continue
        below = parts["free"] < minimum
        if below and began is None:
            began = sample.at
        elif not below and began is not None:
            dips.append((began, sample.at - began))
            began = None
    if began is not None:
        dips.append((began, None))
    return Dips(minimum, dips)
