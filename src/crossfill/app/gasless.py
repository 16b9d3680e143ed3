"""Accepting a gasless execution (POST /execute).

The caller's API key must have a sponsor wallet the service signs for
(`deployment.gasless.sponsors`). The call and its EIP-7702 authorizations are checked (each
authority recovered, its nonce read on chain), simulated from the sponsor (a revert refuses it
with the contract's reason), and held to the per-request gas cap and the key's spend cap.
Accepted, it is queued for the chain's gasless executor and its request moves to
`depositing`, in one transaction with the status event.

Which request: the `requestId` given; else the quoted request the call pays (its simulated logs
hold a Depository deposit for that request's order, or its same-chain Router batch); else a
request of its own (`app.gasless_requests`), created `depositing`. A key acts only on requests
quoted with it, or on a request whose user's own account runs the call and pays it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import structlog
from eth_utils.address import to_checksum_address
from sqlalchemy import and_, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.app import registry
from crossfill.app.gasless_requests import standalone_request
from crossfill.config.deployment import GaslessSettings, KeyHolder
from crossfill.contracts.abi import function
from crossfill.domain import gasless
from crossfill.domain.enums import FEATURES
from crossfill.domain.gas import with_gas_headroom
from crossfill.domain.gasless import ExecuteOrder, ExecutionRefused
from crossfill.domain.status import RequestStatus
from crossfill.errors import (
    ApiError,
    BadRequest,
    ChainError,
    ChainUnreachable,
    Conflict,
    Forbidden,
    NotFound,
    Reverted,
    ServiceUnavailable,
)
from crossfill.kinds.evm.call_payments import CallPayments, payments_in
from crossfill.kinds.evm.chain import evm_chains
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.quoting.prices import value_on_chain
from crossfill.runtime import Runtime
from crossfill.store import commit_signals, gasless_executions, requests
from crossfill.store.tables import ApiKey, GaslessExecution, Request
from crossfill.types import Address

log = structlog.get_logger(__name__)
OPEN_FOR = function("CrossfillOriginSettler", "openFor")
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
    return evm_chains(runtime)[order.chain_id]


def _opens_order(chain: ChainRuntime, order: ExecuteOrder) -> bool:
    """`openFor` on the chain's ERC-7683 origin settler, for a request (docs/erc7683.md)."""
    settler = chain.config.contracts.erc7683_origin_settler
    return (
        order.request_id is not None
        and settler is not None
        and order.to.lower() == settler.lower()
        and order.data[:4] == OPEN_FOR.selector
    )


async def _checked_authorities(chain: ChainRuntime, order: ExecuteOrder, sponsor: Address) -> None:
    try:
        opens_order = _opens_order(chain, order)
        code = b"" if order.authorizations or opens_order else await chain.client.code(order.to)
        gasless.check_sponsorable(order, code, opens_order=opens_order)
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
    gas_limit = with_gas_headroom(estimate)
    if gas_limit > settings.max_gas_per_request:
        raise BadRequest(
            f"the call needs {gas_limit} gas, above the {settings.max_gas_per_request} "
            "one gasless request may use"
        )
    return gas_limit


async def _simulated_payments(
    chain: ChainRuntime, order: ExecuteOrder, sponsor: Address
) -> CallPayments | None:
    """What the call pays, read from its simulated logs; None when the node cannot simulate
    it (`eth_simulateV1` unknown)."""
    try:
        outcome = await chain.client.simulate(gasless.rpc_call(order, sponsor))
    except ChainUnreachable:
        raise
    except ChainError as exc:
        log.warning("call not simulated", chain_id=order.chain_id, error=str(exc))
        return None
    contracts = chain.config.contracts
    return payments_in(outcome.logs, depository=contracts.depository, router=contracts.router)


async def _paid_request(
    runtime: Runtime, order: ExecuteOrder, payments: CallPayments | None
) -> str | None:
    """The quoted request a raw call pays; None when it pays none (or could not be simulated:
    the call is then a request of its own, and a deposit it makes is still found by the
    indexer for its order)."""
    if payments is None or (not payments.order_ids and not payments.request_ids):
        return None
    async with runtime.sessions() as session:
        found = set(
            await session.scalars(
                select(Request.id).where(
                    or_(
                        Request.order_id.in_(payments.order_ids),
                        and_(
                            Request.id.in_(payments.request_ids),
                            Request.origin_chain_id == order.chain_id,
                            Request.destination_chain_id == order.chain_id,
                        ),
                    )
                )
            )
        )
    if len(found) > 1:
        raise BadRequest(
            f"the call pays {len(found)} requests ({', '.join(sorted(found))}); "
            "send one call per request, with its requestId"
        )
    return found.pop() if found else None


def _pays(payments: CallPayments, request: Request) -> bool:
    """A deposit for the request's order, or (same-chain) a Router batch tagged with its id."""
    if request.origin_chain_id != request.destination_chain_id:
        return request.order_id.lower() in payments.order_ids
    return payments.pays(order_id=request.order_id, request_id=request.id)


@dataclass(frozen=True)
class _Binding:
    """Who asks to act on which request: the caller's key and sponsor, and what the call was
    simulated to pay (None: not simulated yet, or the node cannot)."""

    request_id: str
    api_key_id: int
    sponsor: Address
    payments: CallPayments | None


async def _check_bound(
    runtime: Runtime,
    chain: ChainRuntime,
    order: ExecuteOrder,
    bound: _Binding,
) -> None:
    """Forbidden unless the caller may act on the request: it was quoted with the caller's
    key, or the call runs on the request's user's own account and pays it. Nothing else
    proves the user wants it: another key's call that pays nothing would fail the request,
    and the user's later deposit would be refunded instead of filled."""
    async with runtime.sessions() as session:
        request = await requests.get(session, bound.request_id)
    if request is None:
        raise NotFound(f"request {bound.request_id} not found")
    if request.api_key_id is not None and request.api_key_id == bound.api_key_id:
        return
    payments = bound.payments
    if order.to.lower() == request.user_address.lower():
        # Only the account's own key makes its account pay (its delegate runs what it signed).
        if payments is None:
            payments = await _simulated_payments(chain, order, bound.sponsor)
        if payments is not None and _pays(payments, request):
            return
    raise Forbidden(
        f"request {request.id} was not quoted with this API key: only its own key, or a call "
        "of the request's user that pays it, may execute for it"
    )


async def accept(runtime: Runtime, order: ExecuteOrder, api_key_id: int, *, now: datetime) -> str:
    """Queue the execution for its request; the request id. Raises the API's errors."""
    settings = runtime.deployment.gasless
    chain = _chain(runtime, order)
    async with runtime.sessions() as session:
        holder = sponsor_of(settings, await session.get(ApiKey, api_key_id))
    sponsor = Address(holder.address)
    try:
        await _checked_authorities(chain, order, sponsor)
        gas_limit = await _gas_limit(chain, order, sponsor, settings)
        request_id = order.request_id
        payments = None
        if request_id is None:
            payments = await _simulated_payments(chain, order, sponsor)
            request_id = await _paid_request(runtime, order, payments)
        if request_id is not None:
            bound = _Binding(request_id, api_key_id, sponsor, payments)
            await _check_bound(runtime, chain, order, bound)
    except ApiError:
        raise  # Forbidden is a PermissionError, an OSError: not a chain's failure
    except (ChainError, OSError) as exc:
        log.warning("gasless execution not checked", chain_id=order.chain_id, error=str(exc))
        raise ServiceUnavailable(f"chain {order.chain_id} cannot be reached; retry") from None
    max_fee, _ = chain.state.offered_fees()
    queued = _Queued(api_key_id, sponsor, gas_limit, gas_limit * max_fee, now)
    standalone = request_id is None
    try:
        if request_id is None:
            request_id = await _queue_standalone(runtime, chain, order, queued)
        else:
            await _queue(runtime, order, request_id, queued)
    except IntegrityError:
        # Another /execute for this request was accepted at the same moment: one execution.
        raise Conflict(f"request {request_id} already has a gasless execution") from None
    log.info(
        "gasless execution accepted",
        request_id=request_id,
        gas_limit=gas_limit,
        standalone=standalone,
    )
    return request_id


@dataclass(frozen=True)
class _Queued:
    """The accepted execution's sending terms: whose key, which sponsor, its gas limit, what
    it reserves of the key's spend cap until mined, and when."""

    api_key_id: int
    sponsor: Address
    gas_limit: int
    reserved: int
    now: datetime


async def _within_cap(
    session: AsyncSession, settings: GaslessSettings, chain_id: int, queued: _Queued
) -> None:
    # The key's row locked (PostgreSQL): two executions of one key check its cap in turn.
    await session.get(ApiKey, queued.api_key_id, with_for_update=True)
    spent = await gasless_executions.key_spend(session, queued.api_key_id, chain_id)
    if spent + queued.reserved > settings.max_spend_per_key_wei:
        raise Forbidden(
            f"this key's gas sponsorship on chain {chain_id} is spent "
            f"({spent} of {settings.max_spend_per_key_wei} wei)"
        )


async def _queue_standalone(
    runtime: Runtime, chain: ChainRuntime, order: ExecuteOrder, queued: _Queued
) -> str:
    """In one transaction: the call's own request, `depositing` with its event, and the
    execution queued, within the key's spend cap."""
    usd = value_on_chain(
        chain.config,
        chain.state,
        chain.config.native_currency.address,
        order.value,
        int(queued.now.timestamp()),
    )
    row = standalone_request(
        chain.config, order, api_key_id=queued.api_key_id, usd_micros=usd, now=queued.now
    )
    async with runtime.sessions() as session, session.begin():
        await _within_cap(session, runtime.deployment.gasless, order.chain_id, queued)
        request = Request(**row)
        session.add(request)
        await session.flush()
        _store_execution(session, _execution(order, request.id, queued, standalone=True))
        await requests.publish(session, request, now=queued.now)
    return request.id


async def _queue(runtime: Runtime, order: ExecuteOrder, request_id: str, queued: _Queued) -> None:
    """In one transaction: the request checked and moved to `depositing`, the execution
    queued, within the key's spend cap."""
    async with runtime.sessions() as session, session.begin():
        request = await requests.get(session, request_id)
        if request is None:
            raise NotFound(f"request {request_id} not found")
        if request.origin_chain_id != order.chain_id:
            raise BadRequest(
                f"data.chainId {order.chain_id} is not the request's origin chain "
                f"{request.origin_chain_id}"
            )
        if request.status != RequestStatus.WAITING:
            raise Conflict(f"request {request.id} is {request.status}, not waiting for a deposit")
        await _within_cap(session, runtime.deployment.gasless, order.chain_id, queued)
        _store_execution(session, _execution(order, request.id, queued, standalone=False))
        request.features_mask |= GASLESS_FEATURE
        await requests.move(session, request, RequestStatus.DEPOSITING, now=queued.now)


def _store_execution(session: AsyncSession, execution: GaslessExecution) -> None:
    """Stored for the executor, which this process wakes once the session commits."""
    session.add(execution)
    commit_signals.GASLESS_EXECUTIONS.mark(session.sync_session)


def _execution(
    order: ExecuteOrder, request_id: str, queued: _Queued, *, standalone: bool
) -> GaslessExecution:
    return GaslessExecution(
        request_id=request_id,
        api_key_id=queued.api_key_id,
        chain_id=order.chain_id,
        sponsor=queued.sponsor.lower(),
        to_address=order.to.lower(),
        call_data="0x" + order.data.hex(),
        value=str(order.value),
        authorization_list=[entry.to_json() for entry in order.authorizations],
        gas_limit=queued.gas_limit,
        reserved_wei=queued.reserved,
        subsidized=order.subsidize_fees,
        standalone=standalone,
        state=gasless_executions.QUEUED,
        created_at=queued.now,
        updated_at=queued.now,
    )
