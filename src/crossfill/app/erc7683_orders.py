"""ERC-7683 orders opened on an origin settler, taken as requests (docs/erc7683.md).

The settler deposited the order's input into the Depository under the order id; this makes
the request that deposit pays, in the same database transaction that records the deposit's
block, before the deposit is judged. The order is priced as a quote of its input is
(`EXACT_INPUT`, the service's prices and fees), its output paid through the destination
settler by the quote's destination calls (`txs`: the approval and `fill`, run by the Filler's
Router), what the input buys beyond the order's output swept to its recipient. An order Crossfill
will not fill (`domain.erc7683.refusal`) is stored failed with its reason, so its deposit,
judged as any, is refunded to the user. One that cannot be priced at all (a route not served)
has no request: its deposit is an unknown order's, refunded to its depositor, the user.

An order submitted through the OIF endpoints (`app.oif`) has its request stored
(`store_request`) before it is opened: its `Open` event finds it taken.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import orjson
import structlog
from eth_utils.crypto import keccak
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.app.fills import FillTerms, plan_fill
from crossfill.app.quote_rows import quote_rows
from crossfill.app.quotes import chain_views
from crossfill.contracts import calldata
from crossfill.contracts.abi import function
from crossfill.domain.erc7683 import OpenedOrder, refusal
from crossfill.domain.status import RequestStatus
from crossfill.kinds.evm.chain import evm_chains
from crossfill.quoting.engine import Entropy, Quote, plan_quote
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.request import ExtraTx, QuoteRequest
from crossfill.quoting.response import quote_wire
from crossfill.runtime import Runtime
from crossfill.store import requests
from crossfill.store.db import EncodedJson
from crossfill.types import NATIVE_EVM_ADDRESS, ChainId

log = structlog.get_logger(__name__)

DESTINATION_SETTLER = "CrossfillDestinationSettler"


def request_id_of(order_id: str) -> str:
    """The request an order makes: derived from its id, so taking it again finds it."""
    return "0x" + keccak(b"crossfill-erc7683" + bytes.fromhex(order_id[2:])).hex()


def settler_calls(order: OpenedOrder) -> tuple[ExtraTx, ...]:
    """The destination calls paying the order's output through its settler, from the Router:
    an ERC-20 approved to the settler and pulled by its `fill`; native sent with it."""
    output = order.output
    fill = function(DESTINATION_SETTLER, "fill").encode(
        bytes.fromhex(order.order_id[2:]), order.origin_data, b""
    )
    settler = order.destination_settler
    if output.output_token == NATIVE_EVM_ADDRESS:
        return (ExtraTx(to=settler, value=str(output.output_amount), data=calldata.hex_data(fill)),)
    approve = calldata.erc20_approve(settler, output.output_amount)
    return (
        ExtraTx(to=output.output_token, value="0", data=calldata.hex_data(approve)),
        ExtraTx(to=settler, value="0", data=calldata.hex_data(fill)),
    )


def order_quote_request(order: OpenedOrder) -> QuoteRequest:
    """The quote an order is priced by: its whole input, to its recipient, refunds to its user."""
    return QuoteRequest(
        user=order.user,
        origin_chain_id=order.origin_chain_id,
        destination_chain_id=order.destination_chain_id,
        origin_currency=order.input_token,
        destination_currency=order.output.output_token,
        amount=str(order.input_amount),
        trade_type="EXACT_INPUT",
        recipient=order.output.recipient,
        refund_to=order.user,
        txs=settler_calls(order),
    )


def quoted(runtime: Runtime, order: OpenedOrder, now: datetime) -> Quote:
    """`order` priced as it is taken (QuoteError when its route is not served)."""
    entropy = Entropy(request_id=bytes.fromhex(request_id_of(order.order_id)[2:]), salt=0)
    quote = plan_quote(
        order_quote_request(order),
        chains=chain_views(runtime),
        deployment=runtime.deployment,
        now=now,
        entropy=entropy,
    )
    return replace(quote, order_id=order.order_id)


def refusal_of(runtime: Runtime, order: OpenedOrder, quote: Quote, now: datetime) -> str | None:
    """Why Crossfill will not fill `order`, priced as `quote` (`domain.erc7683.refusal`)."""
    destination = evm_chains(runtime).get(ChainId(order.destination_chain_id))
    settler = None if destination is None else destination.config.contracts
    return refusal(
        order,
        settler=None if settler is None else settler.erc7683_destination_settler,
        quoted_output=quote.amount_out,
        now_seconds=int(now.timestamp()),
    )


async def take_orders(runtime: Runtime, session: AsyncSession, orders: list[OpenedOrder]) -> None:
    """The requests of `orders` not taken yet, in the caller's transaction: priced, or failed
    with the reason they are refused."""
    for order in orders:
        if await requests.by_order_id(session, order.order_id) is not None:
            continue
        await _take(runtime, session, order)


async def store_request(
    session: AsyncSession, order: OpenedOrder, quote: Quote, *, api_key_id: int | None
) -> None:
    """The request `order` is, priced as `quote`, `waiting` for its deposit, in the caller's
    transaction."""
    wire = quote_wire(quote, allowance=None, user_balance=None)
    wire["steps"] = []  # the order is opened on chain: nothing is left for the user to do
    rows = quote_rows(quote, wire, referrer=None, api_key_id=api_key_id)
    rows.request["quote"] = EncodedJson(orjson.dumps(wire).decode())
    # Its deposit comes with its opening, which the settler refuses after the open deadline:
    # a deposit up to then is in time (an order submitted to be opened is stored before).
    opened_by = datetime.fromtimestamp(order.open_deadline, UTC)
    rows.request["expires_at"] = max(quote.expires_at, opened_by)
    plan = plan_fill(FillTerms.of_quote(quote), quote.destination)
    # The settler refuses a fill after the order's deadline: so does the solver.
    rows.request["fill_plan"] = replace(
        plan, deadline=min(plan.deadline, order.fill_deadline)
    ).to_json()
    for table, values in rows.inserts():
        await session.execute(insert(table), [dict(values)])


async def _take(runtime: Runtime, session: AsyncSession, order: OpenedOrder) -> None:
    now = datetime.now(UTC)
    try:
        quote = quoted(runtime, order, now)
    except QuoteError as exc:
        # Not a route served: no request; the deposit is refunded as an unknown order's.
        log.info("ERC-7683 order not priced", order_id=order.order_id, error=str(exc))
        return
    reason = refusal_of(runtime, order, quote, now)
    await store_request(session, order, quote, api_key_id=None)
    log.info("ERC-7683 order taken", order_id=order.order_id, refused=reason)
    if reason is None:
        return
    request = await requests.get(session, quote.request_id)
    assert request is not None
    await requests.move(session, request, RequestStatus.FAILURE, now=now, fail_reason=reason)
