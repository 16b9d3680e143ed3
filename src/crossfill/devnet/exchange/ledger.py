"""The devnet exchange's state in its own SQLite file: balances, nonces, the transfer ledger.

One writer (the exchange process); every transfer is one SQLite transaction, so a balance
never goes negative and a nonce is taken once, also across a restart of the process.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from eth_utils.crypto import keccak

from crossfill.kinds.perps import nonces as exchange_nonces
from crossfill.kinds.perps.actions import UserAction

_SCHEMA = """
CREATE TABLE IF NOT EXISTS balances (
    user TEXT NOT NULL, dex TEXT NOT NULL, token TEXT NOT NULL, units INTEGER NOT NULL,
    PRIMARY KEY (user, dex, token), CHECK (units >= 0)
);
CREATE TABLE IF NOT EXISTS nonces (
    signer TEXT NOT NULL, nonce INTEGER NOT NULL, PRIMARY KEY (signer, nonce)
);
CREATE TABLE IF NOT EXISTS ledger (
    id INTEGER PRIMARY KEY, time INTEGER NOT NULL, hash TEXT NOT NULL UNIQUE,
    user TEXT NOT NULL, destination TEXT NOT NULL, delta TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_user ON ledger (user, time);
CREATE INDEX IF NOT EXISTS ledger_destination ON ledger (destination, time);
"""


class Refused(Exception):
    """The exchange refuses the action; the message is what it answers."""


@dataclass(frozen=True)
class Leg:
    """One side of a transfer: which account's which balance, in ledger units."""

    dex: str
    token: str
    units: int


@dataclass(frozen=True)
class LedgerEntry:
    time: int
    hash: str
    delta: dict[str, object]


class ExchangeLedger:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # A commit survives the process (kill -9); only a power loss could lose the last ones,
        # which a devnet can afford: FULL cost ~20 ms a transfer here.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def known(self, user: str) -> bool:
        """Whether the account exists (was ever credited)."""
        row = self._db.execute("SELECT 1 FROM balances WHERE user = ?", (user.lower(),))
        return row.fetchone() is not None

    def balance(self, user: str, dex: str, token: str) -> int:
        row = self._db.execute(
            "SELECT units FROM balances WHERE user = ? AND dex = ? AND token = ?",
            (user.lower(), dex, token),
        ).fetchone()
        return int(row[0]) if row else 0

    def balances(self, user: str, dex: str) -> dict[str, int]:
        rows = self._db.execute(
            "SELECT token, units FROM balances WHERE user = ? AND dex = ?", (user.lower(), dex)
        )
        return {str(token): int(units) for token, units in rows}

    def credit(self, user: str, leg: Leg) -> None:
        with self._transaction() as db:
            _add(db, user, leg, leg.units)

    def transfer(
        self,
        *,
        signer: str,
        action: UserAction,
        source: Leg,
        destination: Leg,
        delta: dict[str, object],
        now_ms: int,
    ) -> str:
        """Take the nonce, move the amount, write the ledger entry: all or nothing.
        Answers the transfer's hash."""
        user = signer.lower()
        with self._transaction() as db:
            kept = [
                int(n) for (n,) in db.execute("SELECT nonce FROM nonces WHERE signer = ?", (user,))
            ]
            refusal = exchange_nonces.refusal(action.nonce, now_ms=now_ms, kept=kept)
            if refusal is not None:
                raise Refused(refusal)
            if _units(db, user, source) < source.units:
                raise Refused("Insufficient balance for transfer")
            db.execute(
                "UPDATE balances SET units = units - ? WHERE user = ? AND dex = ? AND token = ?",
                (source.units, user, source.dex, source.token),
            )
            _add(db, action.destination, destination, destination.units)
            for dropped in set(kept) - set(exchange_nonces.keep(kept, action.nonce)):
                db.execute("DELETE FROM nonces WHERE signer = ? AND nonce = ?", (user, dropped))
            db.execute("INSERT INTO nonces VALUES (?, ?)", (user, action.nonce))
            tx_hash = "0x" + keccak(f"{user}:{action.kind}:{action.nonce}".encode()).hex()
            db.execute(
                "INSERT INTO ledger (time, hash, user, destination, delta) VALUES (?, ?, ?, ?, ?)",
                (now_ms, tx_hash, user, action.destination.lower(), json.dumps(delta)),
            )
        return tx_hash

    def entries(self, user: str, *, start_ms: int, end_ms: int | None) -> list[LedgerEntry]:
        """Transfers from or to `user` in [start_ms, end_ms], oldest first."""
        rows = self._db.execute(
            "SELECT time, hash, delta FROM ledger WHERE (user = ? OR destination = ?) "
            "AND time >= ? AND time <= ? ORDER BY id",
            (user.lower(), user.lower(), start_ms, end_ms if end_ms is not None else 2**63 - 1),
        )
        return [LedgerEntry(int(t), str(h), json.loads(d)) for t, h, d in rows]

    def close(self) -> None:
        self._db.close()


def _units(db: sqlite3.Connection, user: str, leg: Leg) -> int:
    row = db.execute(
        "SELECT units FROM balances WHERE user = ? AND dex = ? AND token = ?",
        (user.lower(), leg.dex, leg.token),
    ).fetchone()
    return int(row[0]) if row else 0


def _add(db: sqlite3.Connection, user: str, leg: Leg, units: int) -> None:
    db.execute(
        "INSERT INTO balances VALUES (?, ?, ?, ?) ON CONFLICT (user, dex, token) "
        "DO UPDATE SET units = units + excluded.units",
        (user.lower(), leg.dex, leg.token, units),
    )
