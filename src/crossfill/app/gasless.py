"""Accepting a gasless execution (POST /execute).

The caller's API key must have a sponsor wallet the service signs for
(`deployment.gasless.sponsors`). The call and its EIP-7702 authorizations are checked (each
authority recovered, its nonce read on chain), simulated from the sponsor (a revert refuses it
with the contract's reason), and held to the per-request gas cap and the key's spend cap.
Accepted, it is queued for the chain's gasless executor and its request moves to
`depositing`, in one transaction with the status event.
"""

from __future__ import annotations

from datetime import datetime

import structlog
from eth_utils.address import to_checksum_address
from sqlalchemy.exc import IntegrityError

from crossfill.app import registry
from crossfill.config.deployment import GaslessSettings, KeyHolder
from crossfill.domain import gasless
from crossfill.domain.enums import FEATURES
from crossfill.domain.gasless import ExecuteOrder, ExecutionRefused
from crossfill.domain.status import RequestStatus
from crossfill.errors import (
    BadRequest,
    ChainError,
    Conflict,
    Forbidden,
    NotFound,
    Reverted,
    ServiceUnavailable,
)
from crossfill.runtime import ChainRuntime, Runtime
from crossfill.store import gasless_executions, requests
from crossfill.store.tables import ApiKey, GaslessExecution
from crossfill.types import Address

log = structlog.get_logger(__name__)
GAS_HEADROOM_PERCENT = 20
GASLESS_FEATURE = 1 << FEATURES.index("gasless_execution")


def sponsor_of(settings: GaslessSettings, key: ApiKey | None) -> KeyHolder:
    """The gas sponsor the service signs for on behalf of `key` (Forbidden when none)."""
    if key is None or key.revoked_at is not None or key.sponsor_address is None:
        raise Forbidden("this API key has no sponsor wallet for gasless execution")
    holder = settings.sponsor(key.sponsor_address)
    if holder is None:
        raise Forbidden("this API key's sponsor wallet is not one the service sends from")
    return holder


def _chain(runtime: Runtime, order: ExecuteOrder) -> ChainRuntime:
    registry.chain(runtime, order.chain_id, "data.chainId")
    if runtime.chain_disabled(order.chain_id):
        raise BadRequest(f"data.chainId: chain {order.chain_id} is disabled")
    return runtime.chains[order.chain_id]


async def _checked_authorities(chain: ChainRuntime, order: ExecuteOrder, sponsor: Address) -> None:
    try:
        authorities = gasless.authorities(order)
        if any(authority.lower() == sponsor.lower() for authority in authorities):
            raise ExecutionRefused("data.authorizationList: the sponsor cannot be an authority")
        nonces = [await chain.client.pending_nonce(authority) for authority in authorities]
        gasless.check_nonces(order, authorities, nonces)
    except ExecutionRefused as exc:
        raise BadRequest(str(exc)) from None


async def _gas_limit(
    chain: ChainRuntime, order: ExecuteOrder, sponsor: Address, settings: GaslessSettings
) -> int:
    call = {
        "from": to_checksum_address(sponsor),
        "to": to_checksum_address(order.to),
        "data": "0x" + order.data.hex(),
        "value": order.value,
    }
    if order.authorizations:
        call["authorizationList"] = [entry.for_rpc() for entry in order.authorizations]
    try:
        estimate = await chain.client.estimate_gas(call)
    except Reverted as revert:
        raise BadRequest(f"the call reverts: {revert.reason.message}") from None
    gas_limit = estimate * (100 + GAS_HEADROOM_PERCENT) // 100
    if gas_limit > settings.max_gas_per_request:
        raise BadRequest(
            f"the call needs {gas_limit} gas, above the {settings.max_gas_per_request} "
            "one gasless request may use"
        )
    return gas_limit


async def accept(runtime: Runtime, order: ExecuteOrder, api_key_id: int, *, now: datetime) -> str:
    """Queue the execution for its request; the request id. Raises the API's errors."""
    settings = runtime.deployment.gasless
    chain = _chain(runtime, order)
    if order.request_id is None:
        raise BadRequest("requestId is required: the quoted request this call deposits for")
    async with runtime.sessions() as session:
        holder = sponsor_of(settings, await session.get(ApiKey, api_key_id))
    sponsor = Address(holder.address)
    try:
        await _checked_authorities(chain, order, sponsor)
        gas_limit = await _gas_limit(chain, order, sponsor, settings)
    except (ChainError, OSError) as exc:
        log.warning("gasless execution not checked", chain_id=order.chain_id, error=str(exc))
        raise ServiceUnavailable(f"chain {order.chain_id} cannot be reached; retry") from None
    max_fee, _ = chain.state.offered_fees()
    try:
        await _queue(runtime, order, api_key_id, sponsor, gas_limit, gas_limit * max_fee, now)
    except IntegrityError:
        # Another /execute for this request was accepted at the same moment: one execution.
        raise Conflict(f"request {order.request_id} already has a gasless execution") from None
    log.info("gasless execution accepted", request_id=order.request_id, gas_limit=gas_limit)
    return order.request_id


async def _queue(
    runtime: Runtime,
    order: ExecuteOrder,
    api_key_id: int,
    sponsor: Address,
    gas_limit: int,
    reserved: int,
    now: datetime,
) -> None:
    """In one transaction: the request checked and moved to `depositing`, the execution
    queued, within the key's spend cap."""
    assert order.request_id is not None
    settings = runtime.deployment.gasless
    async with runtime.sessions() as session, session.begin():
        request = await requests.get(session, order.request_id)
        if request is None:
            raise NotFound(f"request {order.request_id} not found")
        if request.origin_chain_id != order.chain_id:
            raise BadRequest(
                f"data.chainId {order.chain_id} is not the request's origin chain "
                f"{request.origin_chain_id}"
            )
        if request.status != RequestStatus.WAITING:
            raise Conflict(f"request {request.id} is {request.status}, not waiting for a deposit")
        # The key's row locked (PostgreSQL): two executions of one key check its cap in turn.
        await session.get(ApiKey, api_key_id, with_for_update=True)
        spent = await gasless_executions.key_spend(session, api_key_id, order.chain_id)
        if spent + reserved > settings.max_spend_per_key_wei:
            raise Forbidden(
                f"this key's gas sponsorship on chain {order.chain_id} is spent "
                f"({spent} of {settings.max_spend_per_key_wei} wei)"
            )
        session.add(_execution(order, request.id, api_key_id, sponsor, gas_limit, reserved, now))
        request.features_mask |= GASLESS_FEATURE
        await requests.move(session, request, RequestStatus.DEPOSITING, now=now)


def _execution(
    order: ExecuteOrder,
    request_id: str,
    api_key_id: int,
    sponsor: Address,
    gas_limit: int,
    reserved: int,
    now: datetime,
) -> GaslessExecution:
    return GaslessExecution(
        request_id=request_id,
        api_key_id=api_key_id,
        chain_id=order.chain_id,
        sponsor=sponsor.lower(),
        to_address=order.to.lower(),
        call_data="0x" + order.data.hex(),
        value=str(order.value),
        authorization_list=[entry.to_json() for entry in order.authorizations],
        gas_limit=gas_limit,
        reserved_wei=reserved,
        subsidized=order.subsidize_fees,
        state=gasless_executions.QUEUED,
        created_at=now,
        updated_at=now,
    )
