"""The fill plan: what the solver does on the destination chain to execute one order.

Made once, when the request is quoted, and stored with it (a versioned JSON column); the
solver reads it and derives nothing again. Payments are what the Filler pays out of the
solver's inventory (to the recipient, or to the Router that then runs the calls); calls are
the batch the Filler runs after paying (a swap with its own output floor, the client's `txs`,
a sweep of what is left to the recipient).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FILL_PLAN_VERSION = 1


class FillPlanError(ValueError):
    """A stored fill plan this code cannot read (another version, a malformed document)."""


@dataclass(frozen=True)
class Payment:
    recipient: str
    currency: str
    amount: int


@dataclass(frozen=True)
class PlannedCall:
    """One call of the Filler's batch (Multicall3's Call3Value)."""

    target: str
    allow_failure: bool
    value: int
    data: bytes


@dataclass(frozen=True)
class FillPlan:
    chain_id: int
    order_id: str
    payments: tuple[Payment, ...]
    calls: tuple[PlannedCall, ...]
    # Native value sent with the fill, and what the fill takes from the solver's inventory.
    value: int
    spends_currency: str
    spends_amount: int
    # Unix seconds: the order's deadline (a swap's own deadline too).
    deadline: int

    def to_json(self) -> dict[str, Any]:
        return {
            "version": FILL_PLAN_VERSION,
            "chainId": self.chain_id,
            "orderId": self.order_id,
            "payments": [
                {"recipient": p.recipient, "currency": p.currency, "amount": str(p.amount)}
                for p in self.payments
            ],
            "calls": [
                {
                    "target": c.target,
                    "allowFailure": c.allow_failure,
                    "value": str(c.value),
                    "data": "0x" + c.data.hex(),
                }
                for c in self.calls
            ],
            "value": str(self.value),
            "spendsCurrency": self.spends_currency,
            "spendsAmount": str(self.spends_amount),
            "deadline": self.deadline,
        }

    @classmethod
    def from_json(cls, document: dict[str, Any]) -> FillPlan:
        if document.get("version") != FILL_PLAN_VERSION:
            raise FillPlanError(f"fill plan version {document.get('version')!r} is not known")
        try:
            return cls(
                chain_id=int(document["chainId"]),
                order_id=str(document["orderId"]),
                payments=tuple(
                    Payment(str(p["recipient"]), str(p["currency"]), int(p["amount"]))
                    for p in document["payments"]
                ),
                calls=tuple(
                    PlannedCall(
                        str(c["target"]),
                        bool(c["allowFailure"]),
                        int(c["value"]),
                        bytes.fromhex(str(c["data"])[2:]),
                    )
                    for c in document["calls"]
                ),
                value=int(document["value"]),
                spends_currency=str(document["spendsCurrency"]),
                spends_amount=int(document["spendsAmount"]),
                deadline=int(document["deadline"]),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise FillPlanError(f"malformed fill plan: {exc}") from exc
