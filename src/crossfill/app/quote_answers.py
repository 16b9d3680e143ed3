"""The answer to a quote or price request, whichever kinds of chain its route crosses: a route
with a side on a chain whose kind quotes it (`kinds.port.KindChain.quote_route`) is that
kind's; the core's own planner (`app.quotes`) answers the rest."""

from __future__ import annotations

from typing import Any

from crossfill.app.quotes import create_quote, preview_price
from crossfill.kinds.port import QuoteRoute
from crossfill.quoting.request import QuoteRequest
from crossfill.runtime import Runtime
from crossfill.types import ChainId


def kind_route(runtime: Runtime, request: QuoteRequest) -> QuoteRoute | None:
    """The route of the kind that quotes one of the request's sides; with two such sides, the
    kind of lower precedence, the destination's on a tie."""
    routes = []
    for side, chain_id in enumerate((request.destination_chain_id, request.origin_chain_id)):
        chain = runtime.kind_chains.get(ChainId(chain_id))
        route = None if chain is None else chain.quote_route(request)
        if chain is not None and route is not None:
            routes.append((chain.route_precedence, side, route))
    return min(routes, key=lambda found: found[:2])[2] if routes else None


async def quote_answer(runtime: Runtime, request: QuoteRequest, *, api_key_id: int | None) -> bytes:
    """The quote's JSON answer, its request stored."""
    route = kind_route(runtime, request)
    if route is not None:
        return await route.quote(runtime, request, api_key_id=api_key_id)
    return await create_quote(runtime, request, api_key_id=api_key_id)


async def price_answer(
    runtime: Runtime, request: QuoteRequest, *, api_key_id: int | None
) -> dict[str, Any]:
    """POST /price: the quote's fees and details, nothing stored."""
    route = kind_route(runtime, request)
    if route is not None:
        return await route.price(runtime, request, api_key_id=api_key_id)
    return await preview_price(runtime, request, api_key_id=api_key_id)
