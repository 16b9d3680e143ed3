"""The Open Intents Framework's quote and order endpoints over Crossfill's ERC-7683 path
(docs/erc7683.md, "OIF endpoints").

A quote is the gasless order Crossfill would fill: priced as the indexer prices an opened
order (`app.erc7683_orders.quoted`, the quote engine's EXACT_INPUT quote with the destination
settler's calls), its `outputAmount` the priced output less `DRIFT_BPS`, a floor that holds
while prices and gas move a little before it is opened (the recipient still gets all the input
buys when it is filled). Nothing is stored: the order is its own quote, its id the quote's.

A submitted order (the user's EIP-712 signature of it) is checked as the settler will check it
(settler, chain, deadline, signer) and priced again; one Crossfill would refuse is answered 422
and never opened. Then its request is stored `waiting` under the caller's API key, and
`openFor` is queued for the key's gas sponsor as any gasless execution is (`app.gasless`: gas
and spend caps, simulated first, journalled, `depositing`); the deposit it makes decides the
request like any other.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

from crossfill.app import gasless
from crossfill.app.erc7683_orders import quoted, refusal_of, request_id_of, store_request
from crossfill.contracts.abi import function
from crossfill.domain.erc7683 import ORDER_DATA_TYPE, CrossfillOrderData, OpenedOrder
from crossfill.domain.erc7683_gasless import GaslessOrder
from crossfill.domain.erc7930 import InteropAddress
from crossfill.domain.gasless import ExecuteOrder
from crossfill.domain.oif import refusal_words
from crossfill.domain.status import RequestStatus
from crossfill.domain.typed_signatures import check_signer
from crossfill.errors import BadRequest, Conflict, Unprocessable
from crossfill.kinds.evm.chain import evm_chains
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.quoting.engine import FILL_WINDOW, Quote
from crossfill.quoting.errors import QuoteError
from crossfill.runtime import Runtime
from crossfill.store import requests
from crossfill.store.tables import Request, RequestTransaction
from crossfill.types import NATIVE_EVM_ADDRESS, Address, ChainId

# The order's floor below the priced output: room for prices and gas to move before it opens.
DRIFT_BPS = 50
# An order submitted with less time than this left to open it: refused (it would not be sent
# and mined in time).
LEAST_OPEN_SECONDS = 15
OPEN_FOR = function("CrossfillOriginSettler", "openFor")


@dataclass(frozen=True)
class SwapTerms:
    """An OIF quote request as Crossfill serves it: one input, exact, for one output."""

    user: InteropAddress
    input_asset: InteropAddress
    input_amount: int
    output_asset: InteropAddress
    receiver: InteropAddress
    min_output: int | None
    min_valid_until: int | None


@dataclass(frozen=True)
class OrderOffer:
    """A quote: the order to sign (with its decoded data), what it is expected to deliver,
    until when it can be opened, how long its fill takes and who its input is approved to."""

    order: GaslessOrder
    data: CrossfillOrderData
    expected_output: int
    valid_until: int
    eta_seconds: int


def _served(runtime: Runtime, chain_id: int, side: str) -> ChainRuntime:
    chain = evm_chains(runtime).get(ChainId(chain_id))
    if chain is None or runtime.chain_disabled(ChainId(chain_id)):
        raise Unprocessable(
            f"{side}: chain {chain_id} is not served", error_code="UNSUPPORTED_CHAIN"
        )
    return chain


def _settlers(runtime: Runtime, origin_id: int, destination_id: int) -> tuple[str, str]:
    origin = _served(runtime, origin_id, "input")
    destination = _served(runtime, destination_id, "output")
    origin_settler = origin.config.contracts.erc7683_origin_settler
    destination_settler = destination.config.contracts.erc7683_destination_settler
    if origin_settler is None or destination_settler is None:
        raise Unprocessable(
            f"no ERC-7683 settlers between chains {origin_id} and {destination_id}",
            error_code="UNSUPPORTED_ROUTE",
        )
    return origin_settler, destination_settler


def _priced(runtime: Runtime, order: OpenedOrder, now: datetime) -> Quote:
    try:
        return quoted(runtime, order, now)
    except QuoteError as exc:
        raise Unprocessable(exc.message, error_code=exc.error_code) from None


def _valid_until(runtime: Runtime, terms: SwapTerms, now: int) -> int:
    settings = runtime.deployment.quotes
    latest = now + settings.max_ttl_seconds
    wanted = terms.min_valid_until
    if wanted is not None and wanted > latest:
        raise Unprocessable(
            f"intent.minValidUntil: quotes are valid for {settings.max_ttl_seconds} s at most",
            error_code="UNSUPPORTED_VALIDITY",
        )
    return max(now + settings.ttl_seconds, wanted or 0)


def quote_order(runtime: Runtime, terms: SwapTerms, now: datetime) -> OrderOffer:
    """The order Crossfill fills for `terms` (Unprocessable when it fills none)."""
    if terms.user.chain_id != terms.input_asset.chain_id:
        raise Unprocessable("user: not an account on the input's chain", error_code="INVALID_USER")
    if terms.receiver.chain_id != terms.output_asset.chain_id:
        raise Unprocessable(
            "outputs[0].receiver: not an account on the output's chain",
            error_code="INVALID_RECEIVER",
        )
    if terms.input_asset.address == NATIVE_EVM_ADDRESS:
        raise Unprocessable(
            "inputs[0].asset: the origin settler takes ERC-20 inputs only",
            error_code="UNSUPPORTED_ASSET",
        )
    origin_settler, destination_settler = _settlers(
        runtime, terms.input_asset.chain_id, terms.output_asset.chain_id
    )
    seconds = int(now.timestamp())
    open_deadline = _valid_until(runtime, terms, seconds)

    def order_for(output_amount: int) -> tuple[GaslessOrder, CrossfillOrderData]:
        data = CrossfillOrderData(
            input_token=terms.input_asset.address.lower(),
            input_amount=terms.input_amount,
            destination_chain_id=terms.output_asset.chain_id,
            destination_settler=destination_settler.lower(),
            output_token=terms.output_asset.address.lower(),
            output_amount=output_amount,
            recipient=terms.receiver.address.lower(),
        )
        order = GaslessOrder(
            origin_settler=origin_settler,
            user=terms.user.address,
            nonce=secrets.randbits(128),
            origin_chain_id=terms.input_asset.chain_id,
            open_deadline=open_deadline,
            fill_deadline=open_deadline + int(FILL_WINDOW.total_seconds()),
            order_data_type=ORDER_DATA_TYPE,
            order_data=data.encode(),
        )
        return order, data

    # The price does not depend on the output named: priced once, then the floor set.
    probe, probe_data = order_for(1)
    quote = _priced(runtime, probe.opened(probe_data), now)
    floor = quote.amount_out * (10_000 - DRIFT_BPS) // 10_000
    if terms.min_output is not None:
        if terms.min_output > quote.amount_out:
            raise Unprocessable(
                f"the input buys {quote.amount_out}, less than the {terms.min_output} asked",
                error_code="INSUFFICIENT_OUTPUT",
            )
        floor = max(floor, terms.min_output)
    if floor <= 0:
        raise Unprocessable(
            "amount too low: the order would deliver nothing", error_code="AMOUNT_TOO_LOW"
        )
    order, data = order_for(floor)
    return OrderOffer(
        order=order,
        data=data,
        expected_output=quote.amount_out,
        valid_until=open_deadline,
        eta_seconds=quote.destination.fees.fill_time_estimate_seconds,
    )


async def submit_order(
    runtime: Runtime,
    order: GaslessOrder,
    data: CrossfillOrderData,
    signature: bytes,
    *,
    api_key_id: int,
    now: datetime,
) -> str:
    """Open `order`, signed by its user with `signature`, through the key's gas sponsor; its
    order id. Unprocessable when Crossfill would not fill it; Conflict when it was submitted
    already."""
    origin_settler, _ = _settlers(runtime, order.origin_chain_id, data.destination_chain_id)
    if origin_settler.lower() != order.origin_settler.lower():
        raise Unprocessable(
            f"originSettler is not Crossfill's on chain {order.origin_chain_id}",
            error_code="UNSUPPORTED_SETTLER",
        )

    def refused(message: str) -> Unprocessable:
        return Unprocessable(message, error_code="INVALID_SIGNATURE")

    check_signer(
        order.signable(), "0x" + signature.hex(), order.user, refused=refused, what="the order"
    )
    if order.open_deadline < int(now.timestamp()) + LEAST_OPEN_SECONDS:
        raise Unprocessable("the order's openDeadline has passed", error_code="ORDER_EXPIRED")
    opened = order.opened(data)
    quote = _priced(runtime, opened, now)
    reason = refusal_of(runtime, opened, quote, now)
    if reason is not None:
        raise Unprocessable(refusal_words(reason), error_code=reason)
    request_id = request_id_of(opened.order_id)
    async with runtime.sessions() as session, session.begin():
        existing = await requests.by_order_id(session, opened.order_id)
        if existing is None:
            await store_request(session, opened, quote, api_key_id=api_key_id)
        elif existing.status != RequestStatus.WAITING:
            raise Conflict(f"order {opened.order_id} was submitted already ({existing.status})")
    call = ExecuteOrder(
        chain_id=ChainId(order.origin_chain_id),
        to=Address(order.origin_settler),
        data=OPEN_FOR.encode(order.as_tuple(), signature, b""),
        value=0,
        authorizations=(),
        referrer=None,
        subsidize_fees=False,
        request_id=request_id,
    )
    try:
        await gasless.accept(runtime, call, api_key_id, now=now)
    except BadRequest as exc:
        # Its simulation reverts (no allowance, no balance, a nonce used) or needs more gas
        # than a sponsored call may: well-formed, but not an order that can be opened now.
        raise Unprocessable(exc.message, error_code="ORDER_NOT_OPENABLE") from None
    return opened.order_id


@dataclass(frozen=True)
class OrderRecord:
    """An ERC-7683 order's request as stored, with its transactions."""

    request: Request
    transactions: list[RequestTransaction]


async def order_record(runtime: Runtime, order_id: str) -> OrderRecord | None:
    """The request of the ERC-7683 order `order_id` (however it was opened), or None."""
    async with runtime.sessions() as session:
        request = await requests.get(session, request_id_of(order_id))
        if request is None:
            return None
        return OrderRecord(request, await requests.transactions_of(session, request.id))
