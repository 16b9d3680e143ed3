"""Which requests one search term finds, and as what it found them: a request id or an order
id (one request each), a transaction hash (the requests it belongs to, a deposit address's
children among them), or an address (the requests it sent, receives or deposits to).

The requests a term finds are the v3 listing's own filters (`id`, `orderId`, `term`), so the
search and `GET /requests/v3` agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.search_terms import SearchTerm, Shape
from crossfill.store import requests


class Match(StrEnum):
    REQUEST_ID = "request id"
    ORDER_ID = "order id"
    TRANSACTION = "transaction hash"
    ADDRESS = "address"


@dataclass(frozen=True)
class Identified:
    """What a term is, and the one request it names when it is a request or order id."""

    match: Match
    value: str
    request_id: str | None = None

    def listing_params(self) -> dict[str, list[str]]:
        """The v3 listing's parameters for the requests this term finds."""
        if self.match is Match.REQUEST_ID:
            return {"id": [self.value]}
        if self.match is Match.ORDER_ID:
            return {"orderId": [self.value]}
        return {"term": [self.value], "includeChildRequests": ["true"]}


async def identify(session: AsyncSession, term: SearchTerm) -> Identified:
    """A 32-byte value is a request id, else an order id, else a transaction hash; an address
    is an address; an SVM signature a transaction."""
    if term.shape is Shape.HASH32:
        if await requests.get(session, term.value) is not None:
            return Identified(Match.REQUEST_ID, term.value, term.value)
        by_order = await requests.by_order_id(session, term.value)
        if by_order is not None:
            return Identified(Match.ORDER_ID, term.value, by_order.id)
        return Identified(Match.TRANSACTION, term.value)
    if term.shape in (Shape.ADDRESS, Shape.SVM_ADDRESS):
        return Identified(Match.ADDRESS, term.value)
    return Identified(Match.TRANSACTION, term.value)
