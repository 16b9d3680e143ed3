"""The auction a quote holds among external solvers (docs/solvers.md): the eligible solvers
are sent the service's signed bid request at once, each answer is read within the deadline
and a size cap, checked (its EIP-712 signature by the solver registered, its bond), and the
best valid bid wins if it pays more than the operator's own price. No answer in time, or any
answer not a valid bid, is no bid; nothing a solver answers reaches the user but a valid bid."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

import httpx
import orjson
import structlog
from eth_account.messages import encode_typed_data
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from crossfill.domain.rfq import Bid, BidRefusal, Offer, bid_refusal, request_typed_data, winner
from crossfill.domain.solvers import (
    Ask,
    RegisteredSolver,
    bond_covers,
    standing_refusal,
)
from crossfill.errors import ChainError
from crossfill.kinds.evm.chain import evm_chains
from crossfill.kinds.evm.solver_bonds import bond_of
from crossfill.quoting.bid_output import open_to_bids
from crossfill.quoting.engine import Quote
from crossfill.runtime import Runtime
from crossfill.store.solvers import outstanding_usd_micros
from crossfill.types import Address

log = structlog.get_logger(__name__)
# `crossfill_rfq_bids_total` outcomes besides a refusal's reason (`domain.rfq.BidRefusal`).
WON, LOST, DECLINED, LATE, ERROR = "won", "lost", "declined", "late", "error"


@dataclass(frozen=True)
class Win:
    """The winning bid, and until when only its solver may fill the order."""

    offer: Offer
    exclusivity_deadline: datetime

    def wire(self) -> dict[str, Any]:
        """`protocol.solver` of the quote's answer."""
        return {
            "address": self.offer.bid.solver,
            "name": self.offer.solver_name,
            "exclusive": True,
            "exclusivityDeadline": int(self.exclusivity_deadline.timestamp()),
        }


class _BidWire(BaseModel):
    """A bid as a solver answers it (docs/solvers.md); anything else is no bid."""

    model_config = ConfigDict(extra="ignore")
    quoteId: Annotated[str, Field(pattern=r"^0x[0-9a-fA-F]{64}$")]
    solver: Annotated[str, Field(pattern=r"^0x[0-9a-fA-F]{40}$")]
    output: Annotated[str, Field(pattern=r"^[0-9]{1,78}$")]
    expiry: Annotated[int, Field(ge=0, lt=2**63)]
    signature: Annotated[str, Field(max_length=200)]

    def bid(self) -> Bid:
        return Bid(
            quote_id=self.quoteId,
            solver=Address(self.solver),
            output=int(self.output),
            expiry=self.expiry,
            signature=self.signature,
        )


def ask_of(quote: Quote) -> Ask:
    return Ask(
        quote_id=quote.request_id,
        origin_chain_id=quote.origin.id,
        destination_chain_id=quote.destination.id,
        currency_in=quote.currency_in.address.lower(),
        currency_out=quote.currency_out.address.lower(),
        amount_in=quote.split.amount_in,
        recipient=quote.recipient,
        expiry=int(quote.expires_at.timestamp()),
        notional_usd_micros=quote.in_usd(quote.split.amount_in),
    )


@dataclass(frozen=True)
class _Auction:
    runtime: Runtime
    quote: Quote
    ask: Ask
    solver_bond: str
    body: bytes
    max_bytes: int
    outstanding: asyncio.Task[dict[str, int]]

    async def offer(self, rank: int, solver: RegisteredSolver) -> Offer | None:
        """`solver`'s valid bid, or None (why, logged)."""
        bond = await self._bond(solver)
        outstanding = (await self.outstanding).get(solver.evm_address.lower(), 0)
        if bond is None or not bond_covers(
            bond_usd_micros=bond,
            outstanding_usd_micros=outstanding,
            order_usd_micros=self.ask.notional_usd_micros,
        ):
            return None
        refusal, bid = await self._answer(solver)
        if bid is not None and refusal is None:
            refusal = bid_refusal(
                bid, self.ask, registered=solver.evm_address, solver_bond=self.solver_bond
            )
        if bid is not None and refusal is None:
            order_usd = max(self.ask.notional_usd_micros, self.quote.out_usd(bid.output))
            if not bond_covers(
                bond_usd_micros=bond, outstanding_usd_micros=outstanding, order_usd_micros=order_usd
            ):
                refusal = BidRefusal.ABOVE_BOND
        if refusal is not None:
            log.info("bid refused", solver=solver.name, reason=refusal.value)
            self.runtime.metrics.rfq_bids.labels(refusal.value).inc()
            return None
        if bid is None:
            self.runtime.metrics.rfq_bids.labels(DECLINED).inc()
            return None
        return Offer(solver_id=solver.id, solver_name=solver.name, bid=bid, rank=rank)

    async def _bond(self, solver: RegisteredSolver) -> int | None:
        """The solver's bond in the order's output currency on its destination, in micro-USD
        (None when the chain does not answer)."""
        quote = self.quote
        client = evm_chains(self.runtime)[quote.destination.id].client
        currency = quote.currency_out.address.lower()
        try:
            units = await self.runtime.solver_book.bond(
                (quote.destination.id, solver.evm_address.lower(), currency),
                lambda: bond_of(client, self.solver_bond, solver.evm_address, currency),
            )
        except ChainError as exc:
            log.warning("solver bond unread", solver=solver.name, error=str(exc))
            return None
        return quote.out_usd(units)

    async def _answer(self, solver: RegisteredSolver) -> tuple[BidRefusal | None, Bid | None]:
        """The solver's answer as a bid; (None, None) when it declines."""
        try:
            async with self.runtime.rfq_http.stream(
                "POST",
                solver.bid_url,
                content=self.body,
                headers={"content-type": "application/json"},
            ) as response:
                if response.status_code == 204:
                    return None, None
                if response.status_code != 200:
                    return BidRefusal.MALFORMED, None
                declared = response.headers.get("content-length")
                if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
                    return BidRefusal.MALFORMED, None
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > self.max_bytes:
                        return BidRefusal.MALFORMED, None
        except httpx.HTTPError:
            return BidRefusal.NO_ANSWER, None
        try:
            answer = orjson.loads(body)
            if isinstance(answer, dict) and answer.get("decline") is True:
                return None, None
            return None, _BidWire.model_validate(answer).bid()
        except (orjson.JSONDecodeError, ValidationError, ValueError):
            return BidRefusal.MALFORMED, None


def _request_body(runtime: Runtime, ask: Ask, solver_bond: str) -> bytes:
    """The bid request every asked solver gets: the ask, signed by the operator's solver key."""
    typed = request_typed_data(ask, solver_bond)
    signed = runtime.solver_account.sign_message(encode_typed_data(full_message=typed))
    return orjson.dumps(
        {
            "request": {
                **typed["message"],
                "amountIn": str(ask.amount_in),
            },
            "domain": typed["domain"],
            "signer": runtime.solver_account.address,
            "signature": "0x" + bytes(signed.signature).hex(),
        }
    )


async def _outstanding(runtime: Runtime, solvers: list[RegisteredSolver]) -> dict[str, int]:
    async with runtime.sessions() as session:
        return await outstanding_usd_micros(
            session, [s.evm_address for s in solvers], now=datetime.now(UTC)
        )


async def _asked(runtime: Runtime, quote: Quote) -> tuple[Ask, list[RegisteredSolver], str] | None:
    """The ask, the solvers eligible but for their bond, and the destination's SolverBond;
    None when there is no auction to hold."""
    if not open_to_bids(quote):
        return None
    solvers = await runtime.solver_book.solvers()
    solver_bond = quote.destination.contracts.solver_bond
    if not solvers or solver_bond is None:
        return None
    ask, now = ask_of(quote), datetime.now(UTC)
    bar = runtime.deployment.rfq.min_reputation
    asked = [s for s in solvers if standing_refusal(s, ask, now=now, min_reputation=bar) is None]
    return (ask, asked, solver_bond) if asked else None


def _offers(
    runtime: Runtime,
    tasks: dict[asyncio.Task[Offer | None], RegisteredSolver],
    done: set[asyncio.Task[Offer | None]],
) -> list[Offer]:
    """The valid bids among the tasks `done` (the rest are late), each outcome counted."""
    bids = runtime.metrics.rfq_bids
    late = sorted(solver.name for task, solver in tasks.items() if task not in done)
    if late:
        log.info("no bid in time", solvers=late)
        bids.labels(LATE).inc(len(late))
    offers = []
    for task in done:
        failure = None if task.cancelled() else task.exception()
        if failure is not None:
            log.warning("bid not read", error=repr(failure))
            bids.labels(ERROR).inc()
        elif not task.cancelled() and (offer := task.result()) is not None:
            offers.append(offer)
    return offers


def may_hold(runtime: Runtime, quote: Quote) -> bool:
    """Whether `quote` may have an auction: open to bids, and solvers registered (or the
    registry not read lately). False costs the quote nothing more."""
    return open_to_bids(quote) and not runtime.solver_book.none_registered()


async def auction(runtime: Runtime, quote: Quote) -> Win | None:
    """The winning bid for `quote`, if any beats the operator's price; held within the RFQ
    deadline whatever the solvers do. None at once when no solver is registered."""
    held = await _asked(runtime, quote)
    if held is None:
        return None
    ask, asked, solver_bond = held
    settings = runtime.deployment.rfq
    # Made before the clock starts: a client's first making (its TLS context) takes a while.
    assert runtime.rfq_http is not None
    outstanding = asyncio.create_task(_outstanding(runtime, asked))
    auction = _Auction(
        runtime,
        quote,
        ask,
        solver_bond,
        _request_body(runtime, ask, solver_bond),
        settings.max_bid_bytes,
        outstanding,
    )
    tasks = {asyncio.create_task(auction.offer(rank, s)): s for rank, s in enumerate(asked)}
    done, pending = await asyncio.wait(tasks, timeout=settings.deadline_ms / 1000)
    for task in (*pending, outstanding):
        task.cancel()
    offers = _offers(runtime, tasks, done)
    best = winner(offers, operator_output=quote.amount_out)
    runtime.metrics.rfq_bids.labels(LOST).inc(len(offers) - (best is not None))
    if best is None:
        return None
    runtime.metrics.rfq_bids.labels(WON).inc()
    return Win(best, quote.expires_at + timedelta(seconds=settings.exclusivity_seconds))
