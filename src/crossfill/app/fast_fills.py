"""Fast fills (POST /fast-fill): fill a request as soon as its deposit is seen on chain, before
the confirmations its value calls for, at the operator's risk.

Off unless the operator turns it on (`deployment.fast_fill.enabled`). Then an API key may ask
for it on a request it quoted when the key has a sponsor wallet whose owed app fees, less the
fast fills of its keys whose deposits are not confirmed yet, cover the request's quoted value
(the collateral the SDK calls the app's available balance). The request moves to `pending`
and the destination's solver fills it as any other. When the deposit confirms, the indexer
records it and leaves the filled request alone; a deposit that never confirms (reorged, or
short) is the operator's loss, held against the app's balance until the operator settles it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import structlog

from crossfill.app import app_fees
from crossfill.domain.enums import features_mask
from crossfill.domain.status import RequestStatus
from crossfill.errors import BadRequest, Forbidden, NotFound
from crossfill.quoting.money import format_usd
from crossfill.runtime import Runtime
from crossfill.store import fast_fills, requests
from crossfill.store.tables import ApiKey
from crossfill.types import Address

log = structlog.get_logger(__name__)
FAST_FILL_FEATURE = features_mask(["fast_fill"])
DISABLED = "FAST_FILL_DISABLED"
# Already on its way: nothing more to do.
UNDER_WAY = frozenset({RequestStatus.PENDING, RequestStatus.SUBMITTED, RequestStatus.SUCCESS})


@dataclass(frozen=True)
class FastFillOrder:
    request_id: str
    # What the solver receives on the origin chain, as the client says; None: the quote's.
    solver_input_amount: int | None
    # The most this fill may be worth, in micro-USD; None: up to the available balance.
    max_fill_usd_micros: int | None


def _disabled() -> Forbidden:
    return Forbidden(
        "Fast fills are not offered by this deployment: requests are filled once their "
        "deposit is confirmed",
        error_code=DISABLED,
    )


async def _sponsor_wallet(runtime: Runtime, api_key_id: int) -> str:
    async with runtime.sessions() as session:
        key = await session.get(ApiKey, api_key_id)
    if key is None or key.revoked_at is not None or key.sponsor_address is None:
        raise Forbidden(
            "Fast fill requires a sponsoring wallet with app balance: this API key has none",
            error_code="FORBIDDEN",
        )
    return key.sponsor_address


async def request_fast_fill(
    runtime: Runtime, order: FastFillOrder, api_key_id: int, *, now: datetime
) -> str:
    """Queue the request for its fill, or find it under way; the answer's message."""
    if not runtime.deployment.fast_fill.enabled:
        raise _disabled()
    wallet = await _sponsor_wallet(runtime, api_key_id)
    balance = sum(
        owed.usd_micros for owed in await app_fees.owed_balances(runtime, Address(wallet))
    )
    async with runtime.sessions() as session, session.begin():
        request = await requests.get(session, order.request_id)
        if request is None or request.api_key_id != api_key_id:
            raise NotFound(f"request {order.request_id} not found among this key's requests")
        status = RequestStatus(request.status)
        if status in UNDER_WAY:
            return "Request already queued or executed."
        if status is not RequestStatus.WAITING:
            raise BadRequest(f"request {request.id} is {status}: there is nothing to fast fill")
        deposit = await fast_fills.seen_deposit(session, request)
        if deposit is None:
            raise BadRequest(
                f"no deposit for request {request.id} has been seen on chain "
                f"{request.origin_chain_id} yet: a fast fill follows a deposit"
            )
        if deposit.currency != request.origin_currency or int(deposit.amount) < int(
            request.amount_in
        ):
            raise BadRequest(
                f"the deposit seen ({deposit.amount} of {deposit.currency}) does not pay the "
                f"quoted {request.amount_in} of {request.origin_currency}"
            )
        if order.solver_input_amount is not None and not (
            int(request.amount_in) <= order.solver_input_amount <= int(deposit.amount)
        ):
            raise BadRequest(
                f"solverInputCurrencyAmount {order.solver_input_amount} is not what the solver "
                f"receives: the quote asks {request.amount_in}, the deposit paid {deposit.amount}"
            )
        value = request.amount_in_usd_micros
        if order.max_fill_usd_micros is not None and value > order.max_fill_usd_micros:
            raise BadRequest(
                f"the fill is worth {format_usd(value)} USD, over maxFillAmountUsd "
                f"{format_usd(order.max_fill_usd_micros)}"
            )
        # The key's row locked (PostgreSQL): two fast fills check the collateral in turn.
        await session.get(ApiKey, api_key_id, with_for_update=True)
        available = balance - await fast_fills.outstanding_usd_micros(session, wallet)
        if value > available:
            raise Forbidden(
                f"Fast fill requires app balance: the fill is worth {format_usd(value)} USD, "
                f"the sponsoring wallet has {format_usd(max(available, 0))} USD available",
                error_code="INSUFFICIENT_FUNDS",
            )
        request.features_mask |= FAST_FILL_FEATURE
        request.origin_block_number = deposit.block_number
        await requests.move(session, request, RequestStatus.PENDING, now=now)
    log.warning(
        "fast fill before the deposit is confirmed",
        request_id=order.request_id,
        deposit=deposit.tx_hash,
        value_usd=format_usd(value),
    )
    return "Request successfully queued for fast fill."


async def outstanding_usd_micros(runtime: Runtime, wallet: str) -> int:
    """What the sponsor wallet's keys have fast filled on deposits not confirmed yet."""
    async with runtime.sessions() as session:
        return await fast_fills.outstanding_usd_micros(session, wallet)
