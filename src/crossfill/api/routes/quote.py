"""POST /quote/v2 and POST /quote: the same body, the same answer; POST /price: its preview."""

from __future__ import annotations

from fastapi import APIRouter, Response

from crossfill.api.answers import encoded_answer, json_answer
from crossfill.api.auth import CallerDep
from crossfill.api.deps import RuntimeDep
from crossfill.api.openapi import responses
from crossfill.api.schemas.quote import QuoteBody
from crossfill.app.quote_answers import price_answer, quote_answer
from crossfill.quoting.request import QuoteRequest
from crossfill.runtime import Runtime

router = APIRouter(tags=["quote"])
QUOTE_RESPONSES = responses("quote", 400, 401, 403, 429, 503, quote=True)


async def _quote(runtime: Runtime, request: QuoteRequest, api_key_id: int | None) -> Response:
    return encoded_answer(await quote_answer(runtime, request, api_key_id=api_key_id))


@router.post("/quote/v2", response_model=None, responses=QUOTE_RESPONSES)
async def quote_v2(body: QuoteBody, runtime: RuntimeDep, caller: CallerDep) -> Response:
    """An executable quote: steps to sign, fees, details and the protocol order."""
    return await _quote(runtime, body.to_request(), caller.key_id)


@router.post("/quote", response_model=None, responses=QUOTE_RESPONSES)
async def quote(body: QuoteBody, runtime: RuntimeDep, caller: CallerDep) -> Response:
    """Same as /quote/v2."""
    return await _quote(runtime, body.to_request(), caller.key_id)


@router.post(
    "/price", response_model=None, responses=responses("price", 400, 401, 403, 429, 503, quote=True)
)
async def price(body: QuoteBody, runtime: RuntimeDep, caller: CallerDep) -> Response:
    """A quote's price without executing it: fees and details, no steps; nothing is stored."""
    return json_answer(await price_answer(runtime, body.to_request(), api_key_id=caller.key_id))
