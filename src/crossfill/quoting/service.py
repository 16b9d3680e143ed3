"""Serve a quote: snapshot chain state, plan, read the user's position, persist the request."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

import structlog

from crossfill.api.schemas.quote import QuoteBody
from crossfill.domain.order import sign_order_id
from crossfill.errors import ChainError
from crossfill.quoting.engine import ChainView, Entropy, Quote, plan_quote
from crossfill.quoting.response import quote_wire
from crossfill.quoting.steps import spender
from crossfill.runtime import Runtime
from crossfill.store import requests

log = structlog.get_logger(__name__)


def _chain_views(runtime: Runtime) -> dict[int, ChainView]:
    return {
        chain_id: ChainView(
            config=chain.config, state=chain.state, disabled=runtime.chain_disabled(chain_id)
        )
        for chain_id, chain in runtime.chains.items()
    }


async def _user_position(runtime: Runtime, quote: Quote) -> tuple[int | None, int | None]:
    """The user's balance of the input currency and its allowance to our spender contract.

    The one RPC read on the quote path: only the user's own wallet can answer it. On failure the
    quote still goes out, with an approve step included to be safe.
    """
    client = runtime.chains[quote.origin.id].client
    try:
        return await client.balance_and_allowance(
            quote.currency_in.address, quote.user, spender(quote)
        )
    except ChainError as exc:
        log.warning("user position unavailable", chain_id=quote.origin.id, error=str(exc))
        return None, None


async def create_quote(
    runtime: Runtime, body: QuoteBody, *, api_key_id: int | None = None
) -> dict[str, Any]:
    quote = plan_quote(
        body,
        chains=_chain_views(runtime),
        deployment=runtime.deployment,
        now=datetime.now(UTC),
        entropy=Entropy(request_id=os.urandom(32), salt=int.from_bytes(os.urandom(32))),
    )
    balance, allowance = await _user_position(runtime, quote)
    signature = (
        sign_order_id(runtime.solver_account, bytes.fromhex(quote.order_id[2:]))
        if body.includeProtocolData
        else None
    )
    wire = quote_wire(quote, allowance=allowance, user_balance=balance, order_signature=signature)
    async with runtime.sessions() as session, session.begin():
        session.add(
            requests.request_from_quote(quote, wire, referrer=body.referrer, api_key_id=api_key_id)
        )
    return wire
