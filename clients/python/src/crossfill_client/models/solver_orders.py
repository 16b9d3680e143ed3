"""The orders an external solver won (`GET /solvers/{address}/orders`), each with the terms
`Filler.fillExclusive` takes (docs/solvers.md)."""

from __future__ import annotations

from crossfill_client.models._base import WireModel


class FillPayment(WireModel):
    recipient: str
    currency: str
    amount: str


class WonOrder(WireModel):
    """A paid order the solver won and has not filled: it fills it on `chain_id` with
    `fillExclusive(orderId, payments, (solver, exclusivityDeadline, fillDeadline), signature)`
    sent to `filler` with `value` wei."""

    request_id: str
    order_id: str
    chain_id: int
    filler: str
    solver: str
    exclusivity_deadline: int
    fill_deadline: int
    payments: tuple[FillPayment, ...]
    value: str
    signature: str


class WonOrderList(WireModel):
    orders: tuple[WonOrder, ...]
