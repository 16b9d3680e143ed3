"""kill -9 a service while it pays fills off the EVM chains (SVM transfers, exchange
credits), from a journal table of signed payments: the harness both crash tests share.

The deposits are made while the service is down, so that all are found at once when it is
back and the payments start after the restart, where the kills can fall on them.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from eth_account.signers.local import LocalAccount

from tests.conftest import RunningDevnet
from tests.e2e.bridging import deposit_native, request_quote
from tests.support.service import ServiceProcess
from tests.support.waiting import wait_for


@dataclass(frozen=True)
class Owed:
    recipient: str
    amount: int  # the quoted currencyOut, in the destination's smallest unit


@dataclass(frozen=True)
class PaymentJournal:
    """A journal table of the service's SQLite database: one row per signed payment, with a
    `payment_key` (the request) and a `status` that reads `done_status` once it landed."""

    database: Path
    table: str
    done_status: str

    def rows(self) -> int:
        if not self.database.exists():
            return 0
        with contextlib.closing(sqlite3.connect(self.database)) as db:
            try:
                (rows,) = db.execute(f"SELECT count(*) FROM {self.table}").fetchone()
            except sqlite3.OperationalError:  # not migrated yet
                return 0
        return int(rows)

    def grows(self) -> Callable[[], bool]:
        """True once the journal has a row more than now."""
        before = self.rows()
        return lambda: self.rows() > before

    def describe(self, request_ids: Sequence[str]) -> str:
        """Each request's status and lease, and each journalled payment: a failing test's
        message, to tell a payment late from one lost."""
        with contextlib.closing(sqlite3.connect(self.database)) as db:
            requests = [
                db.execute(
                    "SELECT id, status, lease_owner, lease_expires_at, updated_at"
                    " FROM requests WHERE id = ?",
                    (request_id,),
                ).fetchone()
                or (request_id, "(no row)")
                for request_id in request_ids
            ]
            payments = db.execute(
                f"SELECT payment_key, attempt, status, created_at, updated_at FROM {self.table}"
                " ORDER BY created_at"
            ).fetchall()
        return "\n".join(["requests:", *map(str, requests), f"{self.table}:", *map(str, payments)])

    def settles_to(self, expected: dict[str, int], timeout: float = 30) -> bool:
        """True once `done_per_request` is `expected`; False if it is not within `timeout`
        (a payment never marked done, or done twice)."""
        return wait_for(lambda: self.done_per_request() == expected, timeout=timeout)

    def done_per_request(self) -> dict[str, int]:
        with contextlib.closing(sqlite3.connect(self.database)) as db:
            rows = db.execute(
                f"SELECT payment_key, count(*) FROM {self.table} WHERE status = ? GROUP BY 1",
                (self.done_status,),
            ).fetchall()
        return {str(key): int(count) for key, count in rows}


def quote_then_deposit_while_down(
    devnet: RunningDevnet,
    service: ServiceProcess,
    user: LocalAccount,
    bodies: Sequence[dict[str, Any]],
    amount: int,
) -> dict[str, Owed]:
    """Quote every body (each pays `amount` of the origin's native currency), stop the
    service with kill -9, deposit them all, start it again; what each request owes whom."""
    owed: dict[str, Owed] = {}
    quotes: list[dict[str, Any]] = []
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        for body in bodies:
            quote = request_quote(http, body)
            request_id = quote["steps"][0]["requestId"]
            owed[request_id] = Owed(
                body["recipient"], int(quote["details"]["currencyOut"]["amount"])
            )
            quotes.append(quote)
    service.kill()
    for quote in quotes:
        deposit_native(devnet, user, quote, amount)
    service.start()
    return owed


def kill_while_paying(
    service: ServiceProcess, journal: PaymentJournal, orders: int, kills: int
) -> None:
    """kill -9 and restart the service each time a payment is journalled, until `kills` kills
    or every order is done; at least one kill must fall mid-payment (how many do depends on
    the machine's speed)."""
    interrupted = 0
    for _ in range(kills):
        wait_for(journal.grows(), timeout=30, interval=0.02)
        if sum(journal.done_per_request().values()) == orders:
            break  # all paid: a later kill would test nothing
        interrupted += 1
        service.kill()
        service.start()
    assert interrupted >= 1
