"""A raw call's own request (POST /execute without a quoted request to pay): the row a
standalone gasless call is stored, listed and reported as.

It is a `Call` on one chain with the `gasless_execution` feature, created `depositing`: its
user, recipient and refund address are the account the call runs on (`data.to`), and what it
moves is the call's native `value`. Its stored document has the shape the request records read
from a quote (fees, all zero: the sponsor pays the gas; details; a route that stays on the
chain) and no protocol order. Its order id is random and never shown, so no deposit can claim
it; it ends when its transaction is mined (`domain.gasless.settlement`).
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

from crossfill.domain.enums import features_mask
from crossfill.domain.gasless import ExecuteOrder
from crossfill.domain.status import RequestStatus
from crossfill.kinds.evm.config import ChainConfig
from crossfill.quoting.response import SERVICE_ROUTER, amount_wire

REQUEST_TYPE = "Call"
FEATURES = ["gasless_execution"]
_NO_IMPACT = {"usd": "0"}
_FEES = ("gas", "relayer", "relayerGas", "relayerService", "app", "subsidized")
_IMPACTS = ("swap", "execution", "relay", "app", "sponsored")


def _document(chain: ChainConfig, order: ExecuteOrder, usd_micros: int) -> dict[str, Any]:
    native = chain.native_currency
    moved = amount_wire(chain, native, order.value, usd_micros)
    zero = amount_wire(chain, native, 0, 0)
    leg = {
        "inputCurrency": moved,
        "outputCurrency": moved,
        "router": SERVICE_ROUTER,
        "includedSwapSources": [],
    }
    return {
        "fees": dict.fromkeys(
            ("gas", "relayer", "relayerGas", "relayerService", "app", "subsidized"), zero
        ),
        "feeSponsorship": {"quoted": None, "actual": None},
        "details": {
            "operation": "call",
            "sender": order.to.lower(),
            "recipient": order.to.lower(),
            "currencyIn": moved,
            "currencyOut": moved,
            "refundCurrency": moved,
            "expandedPriceImpact": dict.fromkeys(
                ("swap", "execution", "relay", "app", "sponsored"), _NO_IMPACT
            ),
            "rate": "1",
            "timeEstimate": 0,
            "route": {"origin": leg, "destination": leg},
        },
    }


def standalone_request(
    chain: ChainConfig,
    order: ExecuteOrder,
    *,
    api_key_id: int,
    usd_micros: int | None,
    now: datetime,
) -> dict[str, Any]:
    """The new request's column values (a fresh random id and order id)."""
    account = order.to.lower()
    native = chain.native_currency.address.lower()
    return {
        "id": "0x" + os.urandom(32).hex(),
        "order_id": "0x" + os.urandom(32).hex(),
        "status": RequestStatus.DEPOSITING.value,
        "origin_chain_id": chain.id,
        "destination_chain_id": chain.id,
        "user_address": account,
        "recipient": account,
        "refund_to": account,
        "origin_currency": native,
        "destination_currency": native,
        "trade_type": "EXACT_INPUT",
        "amount_in": str(order.value),
        "amount_out": str(order.value),
        "minimum_amount_out": str(order.value),
        "amount_in_usd_micros": usd_micros or 0,
        "explicit_deposit": True,
        "quote": _document(chain, order, usd_micros or 0),
        "referrer": order.referrer,
        "api_key_id": api_key_id,
        "expires_at": now,
        "created_at": now,
        "updated_at": now,
        "request_type": REQUEST_TYPE,
        "currency_in_symbol": chain.native_currency.symbol,
        "currency_out_symbol": chain.native_currency.symbol,
        "features_mask": features_mask(FEATURES),
        "app_fees_usd_micros": 0,
        "plan": None,
        "fill_plan": None,
    }
