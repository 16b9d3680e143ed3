"""Serve a quote that deposits to the perps exchange (chain 1337): plan it, answer it, store
its request. The EVM origin's indexer settles the deposit as any other; `kinds.perps.solver`
pays the recipient's exchange account."""

from __future__ import annotations

from typing import Any

from crossfill.app import registry
from crossfill.app.cross_vm_rows import request_row
from crossfill.app.quote_stamps import fresh_stamp
from crossfill.app.quote_store import store_quote
from crossfill.app.quotes import evm_user_balance
from crossfill.kinds.perps.config import PerpsExchangeConfig
from crossfill.kinds.perps.payout import check_exchange_payout
from crossfill.kinds.perps.quote import PerpsQuoteContext, plan_perps_deposit
from crossfill.kinds.perps.response import perps_deposit_wire
from crossfill.kinds.perps.runtime import PerpsRuntime
from crossfill.quoting.cross_vm import evm_side
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import QuoteRequest
from crossfill.runtime import Runtime
from crossfill.store.requests import REQUESTS


def _context(runtime: Runtime, body: QuoteRequest, perps: PerpsExchangeConfig) -> PerpsQuoteContext:
    evm = evm_side(runtime.deployment, body.origin_chain_id)
    if evm is None:
        raise QuoteError(
            "UNSUPPORTED_CHAIN", f"chain {body.origin_chain_id} is not a supported EVM chain"
        )
    registry.require_enabled(runtime, perps.id, evm.id)
    if not perps.deposit_enabled:
        raise QuoteError("ROUTE_TEMPORARILY_RESTRICTED", f"deposits to {perps.id} are paused")
    price = registry.live_usd_price(runtime, evm, evm.currency(body.origin_currency))
    return PerpsQuoteContext(
        evm=evm,
        perps=perps,
        evm_price=price,
        stamp=fresh_stamp(
            body, runtime.deployment.quotes, solver=runtime.deployment.solver.address
        ),
    )


async def create_perps_deposit_quote(
    runtime: Runtime, exchange: PerpsRuntime, body: QuoteRequest, *, api_key_id: int | None = None
) -> dict[str, Any]:
    context = _context(runtime, body, exchange.config)
    quote = plan_perps_deposit(body, context)
    await check_exchange_payout(exchange, quote.terms.currency_out, quote.terms.amount_out)
    balance = await evm_user_balance(
        runtime,
        context.evm.id,
        quote.terms.currency_in.address,
        quote.terms.user,
        context.evm.contracts.depository,
    )
    wire = perps_deposit_wire(quote, context.evm, user_balance=balance)
    row = request_row(
        quote,
        wire,
        body,
        api_key_id,
        request_type=quote.request_type,
        plan={"kind": "perps", "direction": "to_perps"},
        fill_plan=None,  # the perps payer pays on the exchange
    )
    await store_quote(runtime, [(REQUESTS, row)], request_id=quote.request_id)
    return wire
