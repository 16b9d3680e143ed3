"""Which requests a call's logs pay: Depository deposits tagged with an order id, and Router
batches tagged with a same-chain request's id (what the indexer looks for, read from one
call's logs: a simulation's or a receipt's)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from crossfill.kinds.evm.depository_logs import decode_deposit, to_hex
from crossfill.kinds.evm.router_logs import decode_batch


@dataclass(frozen=True)
class CallPayments:
    order_ids: frozenset[str]
    request_ids: frozenset[str]

    def pays(self, *, order_id: str, request_id: str) -> bool:
        return order_id.lower() in self.order_ids or request_id.lower() in self.request_ids


def payments_in(logs: Iterable[Any], *, depository: str, router: str) -> CallPayments:
    """The order ids the chain's Depository took deposits for, and the request ids the chain's
    Router ran batches for, in these logs; other contracts' look-alike events are ignored."""
    order_ids: set[str] = set()
    request_ids: set[str] = set()
    for entry in logs:
        emitter = to_hex(entry["address"]).lower()
        if emitter == depository.lower() and (deposit := decode_deposit(entry)) is not None:
            order_ids.add(deposit.order_id.lower())
        elif emitter == router.lower() and (batch := decode_batch(entry)) is not None:
            request_ids.add(batch.request_id.lower())
    return CallPayments(frozenset(order_ids), frozenset(request_ids))
