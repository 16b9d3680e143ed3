"""The Open Intents Framework's quote and order endpoints, under `/oif` (its paths `/v1/…`):
an aggregator speaking OIF's API routes to Crossfill at `<service>/oif/v1`. Errors on these
paths are OIF's shape, `{error, message, details?}` (`api.errors`). See docs/erc7683.md."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Path, Response

from crossfill.api.answers import json_answer
from crossfill.api.auth import CallerDep, ExecutingDep
from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import oif_responses
from crossfill.api.routes.oif_wire import (
    order_answer,
    quote_answer,
    received,
    submitted_order,
    swap_terms,
)
from crossfill.api.schemas.oif import (
    OifGetOrderResponse,
    OifGetQuoteRequest,
    OifGetQuoteResponse,
    OifPostOrderRequest,
    OifPostOrderResponse,
)
from crossfill.app.oif import order_record, quote_order, submit_order
from crossfill.errors import BadRequest, NotFound

PREFIX = "/oif"
router = APIRouter(prefix=PREFIX, tags=["oif"])
_ORDER_ID = re.compile(r"0x[0-9a-fA-F]{64}", re.ASCII)


@router.post(
    "/v1/quotes",
    response_model=None,
    responses=oif_responses(OifGetQuoteResponse, 400, 401, 422, 429, 503),
)
async def quotes(body: OifGetQuoteRequest, runtime: RuntimeDep, caller: CallerDep) -> Response:
    """A quote for one exact input to one output: a Crossfill ERC-7683 order to sign
    (`oif-escrow-v0`, typed data of the origin settler's `GaslessCrossChainOrder`)."""
    terms = swap_terms(body)
    return json_answer(quote_answer(terms, quote_order(runtime, terms, datetime.now(UTC))))


@router.post(
    "/v1/orders",
    response_model=None,
    responses=oif_responses(OifPostOrderResponse, 400, 401, 403, 404, 409, 422, 429, 503),
)
async def orders(body: OifPostOrderRequest, runtime: RuntimeDep, caller: ExecutingDep) -> Response:
    """Submit a quoted order with its user's signature: Crossfill opens it (`openFor`) from
    the API key's gas sponsor and fills it."""
    order, data, signature = submitted_order(body)
    assert caller.key_id is not None  # ExecutingDep
    order_id = await submit_order(
        runtime, order, data, signature, api_key_id=caller.key_id, now=datetime.now(UTC)
    )
    return json_answer(received(order_id))


OrderIdPath = Annotated[
    str, Path(alias="id", description="The ERC-7683 order id (0x-prefixed 32 bytes)")
]


@router.get(
    "/v1/orders/{id}",
    response_model=None,
    responses=oif_responses(OifGetOrderResponse, 400, 401, 404, 429),
)
async def order(given_id: OrderIdPath, runtime: RuntimeDep) -> Response:
    """An ERC-7683 order (submitted here or opened on chain) and its status in OIF's terms."""
    if _ORDER_ID.fullmatch(given_id) is None:
        raise BadRequest("id: not a 0x-prefixed 32-byte order id", error_code="INVALID_ORDER_ID")
    order_id = given_id.lower()
    record = await order_record(runtime, order_id)
    if record is None:
        raise NotFound(f"order {order_id} not found", error_code="NOT_FOUND")
    return json_answer(order_answer(order_id, record))
