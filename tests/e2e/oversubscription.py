"""Oversubscribing the solver's inventory on a destination, over the real API: quotes that
each fit its free inventory, deposited together so that together they ask for more; then
what became of each (shared by the destinations of every kind)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
from eth_account.signers.local import LocalAccount

from tests.conftest import RunningDevnet
from tests.e2e.bridging import final_status, request_quote
from tests.e2e.deposits_together import deposit_all_in_one_block
from tests.support.waiting import wait_for

SETTLED = frozenset({"success", "refund"})


@dataclass(frozen=True)
class Oversubscribed:
    """Each deposited request's final status and output, and the late quote's refusal with
    the capacity `/config/v2` answered right after it."""

    statuses: dict[str, dict[str, Any]]
    outputs: dict[str, int]
    late_refusal: dict[str, Any]
    late_capacity: int

    def settled(self, status: str) -> list[str]:
        return [rid for rid, found in self.statuses.items() if found["status"] == status]

    def paid_and_refunded_for_capacity(
        self, *, orders: int, order_out: int
    ) -> tuple[list[str], list[str]]:
        """The requests paid and refunded, once checked: the late quote refused
        `INSUFFICIENT_LIQUIDITY` with less than an order's capacity left, every order settled,
        some of each, and every refund `SOLVER_CAPACITY_EXCEEDED`."""
        assert self.late_refusal["errorCode"] == "INSUFFICIENT_LIQUIDITY", self.late_refusal
        assert self.late_capacity < order_out
        paid, refunded = self.settled("success"), self.settled("refund")
        assert len(paid) + len(refunded) == orders, self.statuses
        assert paid and refunded, (len(paid), len(refunded))
        reasons = {self.statuses[rid]["failReason"] for rid in refunded}
        assert reasons == {"SOLVER_CAPACITY_EXCEEDED"}, reasons
        return paid, refunded


def refusal(http: httpx.Client, body: dict[str, Any]) -> dict[str, Any] | None:
    """The quote's 400 answer; None when it is quoted."""
    answer = http.post("/quote/v2", json=body)
    if answer.status_code == 200:
        return None
    assert answer.status_code == 400, answer.text
    refused: dict[str, Any] = answer.json()
    return refused


def oversubscribe(
    devnet: RunningDevnet,
    http: httpx.Client,
    bodies: list[tuple[LocalAccount, dict[str, Any]]],
    *,
    late: dict[str, Any],
    capacity: Callable[[], int],
    wait_seconds: float,
) -> Oversubscribed:
    """Quote every body (each fits: a bare quote reserves nothing), deposit them all in one
    origin block, see the `late` quote refused while orders wait, and wait for every request
    to settle."""
    quotes = [(user, request_quote(http, body)) for user, body in bodies]
    outputs = {
        quote["steps"][0]["requestId"]: int(quote["details"]["currencyOut"]["amount"])
        for _, quote in quotes
    }
    deposit_all_in_one_block(devnet, quotes)
    refusals: list[tuple[dict[str, Any], int]] = []

    def refused_now() -> bool:
        found = refusal(http, late)
        if found is not None:
            refusals.append((found, capacity()))
        return found is not None

    assert wait_for(refused_now, timeout=wait_seconds, interval=0.2)
    late_refusal, late_capacity = refusals[-1]
    statuses = {
        request_id: final_status(http, request_id, timeout=90, until=SETTLED)
        for request_id in outputs
    }
    return Oversubscribed(statuses, outputs, late_refusal, late_capacity)
