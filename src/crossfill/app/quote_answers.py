"""The answer to a quote or price request, whichever kinds of chain its route crosses: EVM
routes are quoted by `app.quotes`, routes to or from the SVM chain by `app.svm_quotes`,
deposits to the perps exchange by `app.perps_quotes` and withdrawals from it by
`app.perps_withdrawal_quotes`."""

from __future__ import annotations

from typing import Any

import orjson

from crossfill.app.quotes import create_quote, preview_price
from crossfill.kinds.perps.quotes import create_perps_deposit_quote, from_perps, to_perps
from crossfill.kinds.perps.withdrawal_quotes import create_perps_withdrawal_quote
from crossfill.kinds.svm.quotes import create_svm_quote, preview_svm_price, svm_direction
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteRequest
from crossfill.runtime import Runtime


async def quote_answer(runtime: Runtime, request: QuoteRequest, *, api_key_id: int | None) -> bytes:
    """The quote's JSON answer, its request stored."""
    if to_perps(runtime, request):
        return orjson.dumps(
            await create_perps_deposit_quote(runtime, request, api_key_id=api_key_id)
        )
    if from_perps(runtime, request):
        return orjson.dumps(
            await create_perps_withdrawal_quote(runtime, request, api_key_id=api_key_id)
        )
    direction = svm_direction(runtime, request)
    if direction is not None:
        return orjson.dumps(
            await create_svm_quote(runtime, request, direction, api_key_id=api_key_id)
        )
    return await create_quote(runtime, request, api_key_id=api_key_id)


async def price_answer(
    runtime: Runtime, request: QuoteRequest, *, api_key_id: int | None
) -> dict[str, Any]:
    """POST /price: the quote's fees and details, nothing stored."""
    if to_perps(runtime, request) or from_perps(runtime, request):
        raise QuoteError(
            "UNSUPPORTED_ROUTE", "/price does not preview perps-exchange routes; ask /quote/v2"
        )
    direction = svm_direction(runtime, request)
    if direction is not None:
        return preview_svm_price(runtime, request, direction)
    return await preview_price(runtime, request, api_key_id=api_key_id)
