"""Solver, one per destination chain: fill pending requests through the Filler and track them.

A request is leased before it is worked on. Its fill is looked up in the transaction journal
first, so a restart resumes the fill it already signed instead of signing another; the Filler
itself refuses a second fill of an order on-chain. A fill the solver's balance cannot pay (its
output and gas) is not signed: it waits for a top-up, a bounded time (`kinds.evm.solver_funds`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import structlog
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.app.exclusive_fills import (
    exclusive_terms,
    exclusive_until,
    exclusivity_over,
    signed_terms,
)
from crossfill.app.fill_outcome import delivered_amount
from crossfill.app.fills import filler_calldata, revert_reason, stored_fill_plan
from crossfill.contracts import calldata
from crossfill.domain.fades import FadePenalty, fade_cost
from crossfill.domain.fill_plan import FillPlan, FillPlanError
from crossfill.domain.gas import with_gas_headroom
from crossfill.domain.record_facts import Moved
from crossfill.domain.status import RequestStatus
from crossfill.errors import ChainError, InsufficientFunds, Reverted, SignerBusy
from crossfill.first_on_loop import QUEUED_SECONDS, fill_path
from crossfill.kinds.evm.client import BlockHead
from crossfill.kinds.evm.journalled_worker import JournalledWorker
from crossfill.kinds.evm.receipt_outcomes import fee_paid
from crossfill.kinds.evm.replacements import replace_stuck
from crossfill.kinds.evm.solver_funds import Amounts, SolverFunds
from crossfill.kinds.evm.txmanager import (
    Call,
    MinedAttempt,
    Outgoing,
    journalled,
    journalled_each,
)
from crossfill.loops import TRANSIENT, each_on_its_own, run_forever, wait_interval
from crossfill.metrics import Metrics
from crossfill.store import requests, solver_fades
from crossfill.store.db import as_utc
from crossfill.store.tables import Request, RequestTransaction, SentTransaction
from crossfill.types import NATIVE_EVM_ADDRESS

log = structlog.get_logger(__name__)
FILL = "fill"
LEASE = timedelta(seconds=60)
# A request whose fill cannot be tried yet (the chain did not answer, the solver's balance
# is not known yet) is leased again after this, not failed.
RETRY_AFTER = timedelta(seconds=2)
# How long the transaction that claims a request waits for its fill's simulation to sign it
# there (see `Solver._journal_in`).
SIMULATION_IN_TRANSACTION = timedelta(milliseconds=250)
# The most requests a tick claims at once: a batch (a 30M-gas block holds about 500 fills).
BATCH = 500
# Fills recorded as submitted in one database transaction.
RECORDED_TOGETHER = 16
# Mined fills recorded in one database transaction.
SETTLED_TOGETHER = 32


@dataclass(eq=False)
class Solver(JournalledWorker):
    job = "solver"
    # Who leases the requests it fills (this process).
    owner: str
    metrics: Metrics
    # Transactions a batch is recorded as submitted in at once (a database with more than
    # one connection: each is mostly round trips to the server).
    concurrent_transactions: int = 1
    # What a winner that faded pays (the orders external solvers won, filled by the fallback).
    fade_penalty: FadePenalty = field(default_factory=FadePenalty)

    def __post_init__(self) -> None:
        self._wakeup = asyncio.Event()
        # The fills in flight are tracked in a loop of their own (`run`), woken apart.
        self._track_wakeup = asyncio.Event()
        # Requests this process's indexer just made pending, filled first at the next tick.
        self._handed: list[str] = []
        # Requests claimed for this solver in the transaction that made them pending, with
        # what the journal held for their fill in that transaction.
        self._claimed: list[Request] = []
        self._journals: dict[str, SentTransaction | None] = {}
        # Their simulations, started while that transaction was still open.
        self._simulations: dict[str, asyncio.Task[int]] = {}
        # Fills of ours not known mined (as of the last look): new heads matter only then.
        self._in_flight = 0
        # Batches broadcast, being recorded as submitted while the next batches go.
        self._recording: set[asyncio.Task[None]] = set()
        # The signer lease's fencing token the last tick found: a new one means the key was
        # just taken (over), and the requests others held leased are freed (`_took_signer`).
        self._signer_token: int | None = None
        self._funds = SolverFunds(self.chain, self.txmanager, self.metrics, now=self.now)
        # The head at which winners' fills were last looked for (`_watch_winners`).
        self._winners_seen_at: int | None = None

    def wake(self) -> None:
        """Work may be waiting (a new head: a fill may be mined): tick now, not at the interval."""
        self._wakeup.set()
        self._track_wakeup.set()

    def new_head(self, _head: BlockHead) -> None:
        """A new head on this chain: a fill of ours may have been mined in it. Without one in
        flight, nothing to do: the tracking would only compete for the database with the
        indexers' deposits."""
        if self._in_flight:
            self._track_wakeup.set()

    def take(self, request_id: str) -> None:
        """A request that just became pending, handed over in this process: its fill goes
        first at once (leased like any other, so another process's solver cannot take it)."""
        self._handed.append(request_id)
        self._queued()

    async def claim_pending(self, session: AsyncSession, request: Request) -> FillClaim | None:
        """Lease, in the caller's transaction that makes it pending, a request this solver
        fills; the claim then looks its fill up in the journal, signs and journals the fill in
        that transaction when it can (see `FillClaim`). None while this process does not hold
        the signer lease (the request is then claimed like any other)."""
        if not self.txmanager.holds_signer() or not self._operator_may_fill(request):
            return None
        request.lease_owner = self.owner
        request.lease_expires_at = self.now() + LEASE
        return FillClaim(self, request, self._simulation_ahead(request))

    def _handed_claim(
        self,
        request: Request,
        journal: SentTransaction | _Unread | None,
        simulation: asyncio.Task[int] | None,
    ) -> None:
        """A claim whose transaction committed: its fill goes at the next tick, with what the
        journal held for it then (or the fill journalled in it), unless that was not read
        there (then read with the rest of its batch), and its simulation."""
        self._claimed.append(request)
        if not isinstance(journal, _Unread):
            self._journals[request.id] = journal
        if simulation is not None:
            self._simulations[request.id] = simulation
        self._queued()

    def _queued(self) -> None:
        """Fills queued for the next tick: it comes at once, and the process's other work
        waits for them (`first_on_loop`, at most `QUEUED_SECONDS`), following the fills in
        flight included: their receipts are read once, after a burst's fills are out."""
        if self.txmanager.holds_signer():
            fill_path().hold(self, at_most=QUEUED_SECONDS)
        self._wakeup.set()

    def _simulation_ahead(self, request: Request) -> asyncio.Task[int] | None:
        """The fill's simulation (a read), started beside the rest of the transaction that
        claims it and its commit, when the fill may go as things stand; `_fill` decides again
        and uses it only then. Its outcome is consumed even when nobody awaits it (a claim
        that did not commit). A plan it cannot read is left to `_fill` (which gives up)."""
        if request.fill_plan is None:
            return None  # planned from the row: left to `_fill`
        try:
            fill = stored_fill_plan(request, self.config)
        except FillPlanError:
            return None
        if not self._may_go(request.id, fill):
            return None
        task = asyncio.create_task(self._simulate(request, fill))
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
        return task

    async def _wait(self) -> None:
        await wait_interval(self._wakeup, self.interval_seconds)

    async def _track_wait(self) -> None:
        await wait_interval(self._track_wakeup, self.interval_seconds)

    async def run(self) -> None:
        """Two loops: one fills (`fill_tick`), the other follows the fills in flight until
        mined (`track_tick`), so that a burst's next fills never wait behind the receipts of
        its first."""
        await self.txmanager.rebroadcast()
        try:
            async with asyncio.TaskGroup() as loops:
                loops.create_task(
                    run_forever(self.name, self.fill_tick, self._wait, goes_first=True)
                )
                loops.create_task(
                    run_forever(f"{self.name}-tracker", self.track_tick, self._track_wait)
                )
        finally:
            for recording in list(self._recording):
                recording.cancel()

    async def tick(self) -> None:
        """Both loops' work, once (the batches' records written before the tracking)."""
        await self.fill_tick()
        await self.recorded()
        await self.track_tick()

    async def recorded(self) -> None:
        """Until the batches broadcast so far are recorded as submitted."""
        while self._recording:
            await asyncio.gather(*self._recording, return_exceptions=True)

    async def fill_tick(self) -> None:
        try:
            await self._fill_tick()
        except BaseException:
            fill_path().release(self)  # no fills go (another process signs, a failure)
            raise
        if not (self._handed or self._claimed):
            fill_path().release(self)  # the queued fills are out: the rest may go

    async def _fill_tick(self) -> None:
        token = await self.txmanager.hold_signer()  # another process signing: claim nothing
        if token != self._signer_token:
            if token > 1:  # the key was held before (the first token is the first holder's)
                await self._took_signer()
            self._signer_token = token
        # Everything ready now goes out together: claimed with its deposit, handed over by
        # id, then whatever else is pending and free.
        await self._watch_winners()
        claimed, self._claimed = self._claimed, []
        handed, self._handed = self._handed, []
        if handed:
            claimed += await self._claim(handed)
        await self._fill_batch(claimed)
        await self._fill_batch(await self._claim())
        self._funds.publish()

    async def track_tick(self) -> None:
        """The fills in flight: recorded once mined, replaced when stuck; by the process that
        holds the key's lease only (one writer of their outcomes)."""
        await self.txmanager.hold_signer()
        await self._track_submitted()
        await replace_stuck(
            self.txmanager,
            self.sessions,
            older_than=timedelta(seconds=self.config.replace_stuck_after_seconds),
        )

    async def _took_signer(self) -> None:
        """This process has just taken the key's lease on this chain: the pending requests
        that other processes (a previous holder, dead or fenced off) still hold leased are
        freed, to be claimed now rather than when their leases would have lapsed."""
        async with self.sessions() as session, session.begin():
            freed = await requests.release_others(
                session,
                destination_chain_id=self.config.id,
                status=RequestStatus.PENDING,
                owner=self.owner,
            )
        if freed:
            log.info("took the signer lease over", chain_id=self.config.id, requests_freed=freed)

    async def _claim(self, ids: list[str] | None = None) -> list[Request]:
        async with self.sessions() as session, session.begin():
            return await requests.claim(
                session,
                destination_chain_id=self.config.id,
                status=RequestStatus.PENDING,
                owner=self.owner,
                now=self.now(),
                lease=LEASE,
                limit=BATCH,
                ids=ids,
                exclusivity_over_at=self._head_time(),
            )

    def _head_time(self) -> datetime:
        """The head's time (the epoch before one is known): what exclusivity is judged at."""
        head = self.chain.state.head
        return datetime.fromtimestamp(head.timestamp if head is not None else 0, UTC)

    async def _watch_winners(self) -> None:
        """Paid orders external solvers won, not claimed here: a fill the Filler logged for
        one (its winner's, within its exclusivity or after) is its fill, tracked to `success`
        as ours are. Looked for once a head."""
        head = self.chain.state.head
        if head is None or head.number == self._winners_seen_at:
            return
        self._winners_seen_at = head.number
        async with self.sessions() as session:
            waiting = await requests.awaiting_exclusive_fill(
                session, destination_chain_id=self.config.id, now=self.now()
            )
        await each_on_its_own(
            self.name, waiting, self._winner_filled, label=lambda request: request.id
        )

    async def _winner_filled(self, request: Request) -> None:
        fills = await self._filled_on_chain(request)
        if fills:
            log.info("filled by its exclusive solver", request_id=request.id, tx=fills[0])
            await self._submitted(request.id, fills[0])

    async def _filled_on_chain(self, request: Request) -> list[str]:
        """The transactions whose Filler logged the request's order filled."""
        return await self.chain.client.fill_tx_hashes(
            self.config.contracts.filler, request.order_id, not_before=_created(request)
        )

    async def _judge_winner(
        self, session: AsyncSession, request: Request, receipt: dict[str, Any], now: datetime
    ) -> None:
        """An order an external solver won, filled: by the solver (its run of fades is over),
        or by our fallback (it faded: cooled down, and its bond owes what the fallback cost
        beyond the operator's own price, `domain.fades`)."""
        if str(receipt.get("from", "")).lower() != self.txmanager.sender:
            await solver_fades.filled_its_own(session, request, now=now)
            return
        cost = fade_cost(
            paid=int(request.amount_out),
            operator_output=None
            if request.operator_amount_out is None
            else int(request.operator_amount_out),
            gas=fee_paid(receipt),
            gas_in_output=request.destination_currency.lower() == NATIVE_EVM_ADDRESS,
        )
        await solver_fades.faded(session, request, cost=cost, penalty=self.fade_penalty, now=now)

    async def _lost_to_winner(
        self, request: Request, tx_hash: str, receipt: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        """A fill of ours that reverted: when it was the fallback of an order an external
        solver won, and its winner filled the order first, that fill is the order's (the user
        was paid; nothing is refunded); otherwise ours, as it is."""
        if receipt["status"] == 1 or exclusive_until(request) is None:
            return tx_hash, receipt
        other = next((h for h in await self._filled_on_chain(request) if h != tx_hash), None)
        found = None if other is None else await self.chain.client.receipt(other)
        if other is None or found is None:
            return tx_hash, receipt
        log.info("the fallback lost to its winner's fill", request_id=request.id, tx=other)
        return other, dict(found)

    async def _fill_batch(self, batch: list[Request]) -> None:
        """Fill many requests at once: their journal read together, their simulations run
        together, then every fill that may go signed under pipelined nonces, journalled in
        one transaction and broadcast together (`TxManager.send_batch`); a fill signed before
        is resumed, never signed again. Each request is judged on its own: one refused,
        postponed or crashed leaves the others going."""
        if not batch:
            return
        journals = await self._journals_of(batch)
        simulations = {
            request.id: task
            for request in batch
            if (task := self._simulation_for(request, journals[request.id])) is not None
        }
        ready: list[tuple[Request, Call]] = []
        resumed: list[tuple[Request, str]] = []

        async def prepare(request: Request) -> None:
            journal = journals[request.id]
            if journal is not None:
                with suppress(FillPlanError):  # its output stays the order's until paid
                    self._funds.reserve(request.id, stored_fill_plan(request, self.config))
                resumed.append((request, journal.tx_hash))
                return
            call = await self._prepared(request, simulations.get(request.id))
            if call is not None:
                ready.append((request, call))

        try:
            await each_on_its_own(
                self.name, batch, prepare, label=lambda request: request.id, on_crash=self._give_up
            )
        finally:
            _consume(simulations.values())
        sent = await self._send_ready(ready)
        # Broadcast: their records (the journal holds them already) are written beside the
        # next batches, which do not wait for them.
        recording = asyncio.create_task(self._submitted_all([*resumed, *sent]))
        self._recording.add(recording)
        recording.add_done_callback(self._recorded)

    def _recorded(self, task: asyncio.Task[None]) -> None:
        self._recording.discard(task)
        if not task.cancelled() and (failure := task.exception()) is not None:
            # Pending still, and leased a while: claimed again then, the journal's fill resumed.
            log.warning("fills not recorded as submitted", error=str(failure))

    async def _send_each(self, ready: list[tuple[Request, Call]]) -> list[tuple[Request, str]]:
        sent: list[tuple[Request, str]] = []

        async def send(item: tuple[Request, Call]) -> None:
            tx_hash = await self._send_ready_one(*item)
            if tx_hash is not None:
                sent.append((item[0], tx_hash))

        async def give_up(item: tuple[Request, Call]) -> None:
            await self._give_up(item[0])

        await each_on_its_own(
            self.name, ready, send, label=lambda item: item[0].id, on_crash=give_up
        )
        return sent

    async def _send_ready_one(self, request: Request, call: Call) -> str | None:
        try:
            row = await self._send_call(request, call)
        except InsufficientFunds:  # the key's own check: another of its senders came first
            self._funds.release(request.id)
            fill = stored_fill_plan(request, self.config)
            await self._short_of_funds(request, fill, self._funds.needs(fill, call))
            return None
        except SignerBusy as exc:  # another process holds the key: nothing signed
            self._funds.release(request.id)
            await self._retry_soon(request.id, f"fill not sent: {exc}")
            return None
        except ChainError as exc:
            # Journalled before its broadcast failed: the next attempt finds it, mined or not
            # (its output stays reserved meanwhile); the request waits, nothing refused.
            await self._retry_soon(request.id, f"fill not sent: {exc}")
            return None
        self._observe_service_share(request)
        return row.tx_hash

    async def _journals_of(self, batch: list[Request]) -> dict[str, SentTransaction | None]:
        """What the journal holds for each request's fill: as found in the transaction that
        claimed it with its deposit, or read now (all in one query)."""
        known = {r.id: self._journals.pop(r.id) for r in batch if r.id in self._journals}
        unknown = [request.id for request in batch if request.id not in known]
        if unknown:
            async with self.sessions() as session:
                found = await journalled_each(session, unknown, FILL)
            known.update({request_id: found.get(request_id) for request_id in unknown})
        return known

    def _simulation_for(
        self, request: Request, journal: SentTransaction | None
    ) -> asyncio.Task[int] | None:
        """The fill's simulation: the one started with its claim, or one started now, when
        nothing was journalled for it and it may go (`_simulation_ahead`)."""
        ahead = self._simulations.pop(request.id, None)
        if journal is not None:
            _consume([ahead] if ahead is not None else [])
            return None
        return ahead if ahead is not None else self._simulation_ahead(request)

    async def _prepared(
        self, request: Request, simulation: asyncio.Task[int] | None
    ) -> Call | None:
        """The Filler call of a fill nothing was journalled for, simulated, when it may go
        now; otherwise None, the request refused or postponed (`_call_or_refusal`)."""
        fill = stored_fill_plan(request, self.config)
        self._funds.forget(request.id)
        may_go = self._may_go(request.id, fill)
        simulated: int | BaseException | None = None
        if may_go:
            try:
                simulated = await (
                    simulation if simulation is not None else self._simulate(request, fill)
                )
            except (ChainError, SignerBusy) as exc:
                simulated = exc
        return await self._call_or_refusal(request, fill, may_go, simulated)

    async def _send_ready(self, ready: list[tuple[Request, Call]]) -> list[tuple[Request, str]]:
        """Sign, journal and broadcast the ready fills together; those sent, with their hashes.
        A fill the key cannot pay waits for funds; one whose broadcast failed is journalled
        (tracked as submitted: sent again, found mined or not); a batch that could not be
        journalled (the lease lost, the database) waits, nothing refused."""
        if not ready:
            return []
        batch = [Outgoing(call, FILL, request.id) for request, call in ready]
        try:
            outcomes = await self.txmanager.send_batch(batch)
        except TRANSIENT as exc:
            for request, _call in ready:  # nothing journalled: their outputs are free again
                self._funds.release(request.id)
                await self._retry_soon(request.id, f"fill not sent: {exc}")
            return []
        except Exception:
            # Nothing journalled (a bug signing one of them, say): each sent on its own, so
            # the one that cannot be is given up and the others go.
            log.exception("fills not sent together: each on its own", fills=len(ready))
            return await self._send_each(ready)
        sent = []
        for (request, call), outcome in zip(ready, outcomes, strict=True):
            if isinstance(outcome, InsufficientFunds):
                self._funds.release(request.id)
                fill = stored_fill_plan(request, self.config)
                await self._short_of_funds(request, fill, self._funds.needs(fill, call))
                continue
            if isinstance(outcome, ChainError):
                # Journalled: the next attempt finds it, mined or not (the answer may only
                # have been lost); the request waits, nothing refused.
                await self._retry_soon(request.id, f"fill not sent: {outcome}")
                continue
            self._observe_service_share(request)
            sent.append((request, outcome.tx_hash))
        return sent

    def _expired(self, fill: FillPlan) -> bool:
        return self.now().timestamp() > fill.deadline

    def _may_go(self, request_id: str, fill: FillPlan) -> bool:
        """The fill may be simulated now: the balance it pays from is known and holds what
        it pays out, less what fills signed before it take (its gas is judged once
        simulated), and the order has not expired."""
        balance = self.chain.state.solver_balance(fill.spends_currency)
        return (
            balance is not None
            and not self._expired(fill)
            and not self._funds.missing(self._funds.needs(fill), excluding=request_id)
        )

    async def _fail(self, request_id: str, reason: str) -> None:
        self._funds.release(request_id)
        async with self.sessions() as session, session.begin():
            request = await requests.get(session, request_id)
            assert request is not None
            await requests.move(
                session, request, RequestStatus.FAILURE, now=self.now(), fail_reason=reason
            )
        log.warning("fill refused", request_id=request_id, reason=reason)

    async def _give_up(self, request: Request) -> None:
        """A request the solver cannot process (a record it cannot read, a bug) fails, so the
        refunder returns its deposit; unless its fill was already signed: that one is tracked."""
        if await self.txmanager.for_request(request.id, FILL) is None:
            await self._fail(request.id, "UNKNOWN")

    async def _call_or_refusal(
        self, request: Request, fill: FillPlan, may_go: bool, simulated: int | BaseException | None
    ) -> Call | None:
        """A fill nothing was journalled for, simulated already when it `may_go`: its call,
        ready to sign; or None, the request refused or postponed."""
        if self.chain.state.solver_balance(fill.spends_currency) is None:
            # Not read yet (just started, or the RPC is down): no reason to refuse the order.
            await self._retry_soon(request.id, "solver balance not known yet")
            return None
        if self._expired(fill):
            await self._fail(request.id, "ORDER_EXPIRED")
            return None
        needs = self._funds.needs(fill)
        if not may_go:  # it cannot pay even the output
            await self._short_of_funds(request, fill, needs)
            return None
        if isinstance(simulated, Reverted):
            await self._simulation_reverted(request, simulated)
            return None
        if isinstance(simulated, BaseException) or simulated is None:
            # A failed simulation (the node), or another process holding the key: the request
            # waits, nothing refused.
            await self._retry_soon(request.id, f"fill not simulated: {simulated}")
            return None
        call = self._fill_call(request, fill, simulated)
        needs = self._funds.needs(fill, call)
        # Its output reserved at once (nothing awaited in between), so no other fill of the
        # batch is judged against it.
        if not self._funds.take(request.id, fill, needs):
            await self._short_of_funds(request, fill, needs)
            return None
        return call

    async def _short_of_funds(self, request: Request, fill: FillPlan, needs: Amounts) -> None:
        """A fill the balance cannot pay (nothing signed): it waits for repayments or a
        top-up, a bounded time after its deposit was accepted (its `updated_at`, untouched by
        leases); then its order is refunded: SOLVER_CAPACITY_EXCEEDED when the inventory
        cannot cover its output, SOLVER_BALANCE_TOO_LOW when it lacks only the fill's gas."""
        output_short = self._funds.output_short(request.id, fill)
        if self._funds.overdue(as_utc(request.updated_at), output_short=output_short):
            reason = "SOLVER_CAPACITY_EXCEEDED" if output_short else "SOLVER_BALANCE_TOO_LOW"
            await self._fail(request.id, reason)
            return
        self._funds.waits(request.id, needs)
        missing = self._funds.missing(needs)
        await self._retry_soon(request.id, f"the solver's balance is short of {missing}")

    def _observe_service_share(self, request: Request) -> None:
        """The deposit was accepted when the indexer moved the request to pending (its
        `updated_at`, untouched by leases): from then to this broadcast is the service's own."""
        waited = self.now() - as_utc(request.updated_at)
        self.metrics.fill_service.labels(request.origin_chain_id, self.config.id).observe(
            max(0.0, waited.total_seconds())
        )

    async def _signed_fill(self, request: Request, fill: FillPlan) -> SentTransaction:
        """Simulate the plan's Filler call (Reverted if the contract refuses it), then sign,
        journal and broadcast it."""
        return await self._send_fill(request, fill, await self._simulate(request, fill))

    def _operator_may_fill(self, request: Request) -> bool:
        """Not an order an external solver still holds exclusively (as of the head)."""
        head = self.chain.state.head
        return exclusive_until(request) is None or (
            head is not None and exclusivity_over(request, head.timestamp)
        )

    def _calldata(self, request: Request, fill: FillPlan) -> bytes:
        """`Filler.fill` for the plan; for an order an external solver won (the fallback,
        after its exclusivity), `Filler.fillExclusive` under its terms, signed here."""
        terms = exclusive_terms(request, self.config)
        if terms is None:
            return filler_calldata(fill)
        return signed_terms(terms, self.txmanager.account).calldata()

    async def _simulate(self, request: Request, fill: FillPlan) -> int:
        """The Filler call's gas: Reverted if the contract refuses it."""
        return await self.chain.client.estimate_call(
            self.txmanager.account.address,
            self.config.contracts.filler,
            calldata.hex_data(self._calldata(request, fill)),
            fill.value,
        )

    def _fill_call(self, request: Request, fill: FillPlan, gas: int) -> Call:
        """The Filler call of a simulated fill, with the gas headroom."""
        return Call(
            self.config.contracts.filler,
            self._calldata(request, fill),
            fill.value,
            with_gas_headroom(gas),
        )

    async def _send_fill(self, request: Request, fill: FillPlan, gas: int) -> SentTransaction:
        """Sign, journal and broadcast the simulated fill."""
        return await self._send_call(request, self._fill_call(request, fill, gas))

    async def _send_call(self, request: Request, call: Call) -> SentTransaction:
        """Sign, journal and broadcast a request's Filler call."""
        return await self.txmanager.send(
            to=call.to,
            data=call.data,
            value=call.value,
            gas_limit=call.gas_limit,
            purpose=FILL,
            request_id=request.id,
        )

    async def _journal_in(self, session: AsyncSession, claim: FillClaim) -> SentTransaction | None:
        """The claimed fill signed and journalled in the transaction that claims it, when it
        may go now as `_fill` would decide (nothing journalled for it, the balance known and
        enough, not expired, simulated without a revert) and the key is free; None otherwise,
        and `_fill` decides after the commit as for any claim."""
        simulation = claim.simulation
        if claim.journal is not None or simulation is None or not self.txmanager.may_journal_in():
            return None  # not waited for: the key is another send's (a batch's), say
        # A slow destination node must not hold the deposit's transaction open: past this,
        # the simulation is left running for `_fill`.
        await asyncio.wait((simulation,), timeout=SIMULATION_IN_TRANSACTION.total_seconds())
        if not simulation.done() or simulation.cancelled() or simulation.exception() is not None:
            return None  # `_fill` meets the same outcome again
        gas = simulation.result()
        request_id = claim.request.id
        fill = stored_fill_plan(claim.request, self.config)
        # The key's own check (`journal_in`) judges the gas.
        if not self._may_go(request_id, fill) or not self._funds.take(
            request_id, fill, self._funds.needs(fill)
        ):
            return None
        try:
            signed = await self.txmanager.journal_in(
                session,
                self._fill_call(claim.request, fill, gas),
                purpose=FILL,
                request_id=request_id,
            )
        except BaseException:
            self._funds.release(request_id)
            raise
        if signed is None:
            self._funds.release(request_id)
        return signed

    async def _broadcast_journalled(self, request: Request, row: SentTransaction) -> None:
        """A fill journalled in the transaction that claimed it, which has committed."""
        try:
            await self.txmanager.journalled_committed(row)
        except ChainError as exc:
            # Journalled: tracked as submitted like a fill whose broadcast failed in `_fill`.
            log.warning("fill broadcast failed", request_id=request.id, error=str(exc))
            return
        self._observe_service_share(request)

    async def _after_nonce_taken(self, request: Request, recorded_hash: str | None) -> None:
        """Our fill's nonce went to another transaction (the key was used elsewhere, or a void
        took the nonce of a fill a node refused for want of funds): the order is filled
        already (by a fill not in our journal), or its fill is signed again, once the balance
        can pay it (nothing of it can be mined meanwhile: it waits as a new fill would)."""
        on_chain = await self.chain.client.fill_tx_hashes(
            self.config.contracts.filler, request.order_id, not_before=_created(request)
        )
        if on_chain:
            new_hash = on_chain[0]
        else:
            fill = stored_fill_plan(request, self.config)
            try:
                new_hash = (await self._signed_fill(request, fill)).tx_hash
            except Reverted as revert:
                await self._simulation_reverted(request, revert)
                return
            except InsufficientFunds:
                await self._short_of_funds(request, fill, self._funds.needs(fill))
                return
        if recorded_hash is not None and recorded_hash != new_hash:
            async with self.sessions() as session, session.begin():
                await requests.replace_transaction_hash(
                    session, request.id, old=recorded_hash, new=new_hash
                )

    async def _retry_soon(self, request_id: str, why: str) -> None:
        """Lease the request again shortly: nothing about it was refused."""
        async with self.sessions() as session, session.begin():
            await requests.lease_until(session, request_id, self.now() + RETRY_AFTER)
        log.warning("fill postponed", request_id=request_id, reason=why)

    async def _simulation_reverted(self, request: Request, revert: Reverted) -> None:
        if revert.reason.name == "AlreadyFilled":
            # Filled on-chain already (by us, or by the exclusive solver of an order an
            # external solver won). Never refund.
            fills = await self.chain.client.fill_tx_hashes(
                self.config.contracts.filler, request.order_id, not_before=_created(request)
            )
            if fills:
                await self._submitted(request.id, fills[0])
                return
        await self._fail(request.id, revert_reason(revert.reason))

    async def _submitted(self, request_id: str, tx_hash: str) -> None:
        now = self.now()
        async with self.sessions() as session, session.begin():
            request = await requests.get(session, request_id)
            assert request is not None
            await self.record_sent(session, request_id, kind=FILL, tx_hash=tx_hash, now=now)
            if request.status == RequestStatus.PENDING:
                await requests.move(session, request, RequestStatus.SUBMITTED, now=now)
        self._in_flight += 1

    async def _submitted_all(self, sent: list[tuple[Request, str]]) -> None:
        """`_submitted` for a batch's fills (broadcast already: this is their record, the
        journal holds them), a few to a transaction: on SQLite, whose one connection quotes
        need too, no transaction holds it long."""
        at_once = asyncio.Semaphore(self.concurrent_transactions)

        async def record(part: list[tuple[Request, str]]) -> None:
            async with at_once:
                await self._submitted_together(part)

        await asyncio.gather(
            *(
                record(sent[start : start + RECORDED_TOGETHER])
                for start in range(0, len(sent), RECORDED_TOGETHER)
            )
        )

    async def _submitted_together(self, sent: list[tuple[Request, str]]) -> None:
        now = self.now()
        ids = [request.id for request, _tx_hash in sent]
        async with self.sessions() as session, session.begin():
            # Read for all of them at once; their writes go with the commit, a statement a table.
            found = await requests.get_each(session, ids)
            known = await requests.transactions_of_each(session, ids)
            with session.no_autoflush:
                for request_id, tx_hash in zip(ids, (tx_hash for _r, tx_hash in sent), strict=True):
                    request = found[request_id]
                    await self.record_sent(
                        session, request_id, kind=FILL, tx_hash=tx_hash, now=now,
                        known=known[request_id],
                    )  # fmt: skip
                    if request.status == RequestStatus.PENDING:
                        await requests.move(
                            session, request, RequestStatus.SUBMITTED, now=now,
                            transactions=known[request_id],
                        )  # fmt: skip
        self._in_flight += len(sent)

    async def _track_submitted(self) -> None:
        async with self.sessions() as session:
            submitted = list(
                await session.scalars(
                    select(Request).where(
                        Request.destination_chain_id == self.config.id,
                        Request.status == RequestStatus.SUBMITTED,
                    )
                )
            )
        self._in_flight = len(submitted)
        for request in submitted:  # signed here before, or by another process
            if not self._funds.reserved(request.id):
                with suppress(FillPlanError):
                    self._funds.reserve(request.id, stored_fill_plan(request, self.config))
        self._funds.forget_unsubmitted({request.id for request in submitted}, older_than=LEASE)
        # A fill whose nonce the chain has not used yet is not mined: not looked at. Of the
        # rest, those found mined as journalled are recorded together; what is left (a fill
        # recorded under another hash, a nonce taken, not in the journal) one by one.
        attempts = await self.txmanager.latest_attempts([r.id for r in submitted], FILL)
        unmined = await self.txmanager.unmined(attempts)
        rest = [request for request in submitted if request.id not in unmined]
        try:
            settled = await self._settle_mined_together(
                {r.id: attempts[r.id] for r in rest if r.id in attempts}
            )
        except Exception as exc:
            # Nothing recorded: each is looked at on its own, one that cannot be isolated.
            log.warning("mined fills not recorded together", error=str(exc))
            settled = set()
        await each_on_its_own(
            self.name,
            [request for request in rest if request.id not in settled],
            self._track,
            label=lambda request: request.id,
        )

    async def _settle_mined_together(self, attempts: dict[str, list[SentTransaction]]) -> set[str]:
        """`_settle_mined` for the fills of these latest attempts (by request) that were mined,
        their receipts and blocks read together, recorded `SETTLED_TOGETHER` to a transaction
        (with their journal rows), each after the fill path's turn (`first_on_loop`): a
        burst's next fills never wait behind the records of its first. The requests settled.
        A request whose record names another fill than the one mined is left out
        (`_settle_mined` replaces its hash)."""
        mined = await self.txmanager.mined_each(attempts)
        if not mined:
            return set()
        numbers = list({int(found.receipt["blockNumber"]) for found in mined.values()})
        heads = await asyncio.gather(*(self.chain.client.block_at(n) for n in numbers))
        blocks = dict(zip(numbers, heads, strict=True))
        ids = list(mined)
        settled: set[str] = set()
        for start in range(0, len(ids), SETTLED_TOGETHER):
            await fill_path().after()
            part = {
                request_id: mined[request_id]
                for request_id in ids[start : start + SETTLED_TOGETHER]
            }
            settled |= await self._settled_in_transaction(part, blocks)
        return settled

    async def _settled_in_transaction(
        self, mined: dict[str, MinedAttempt], blocks: dict[int, BlockHead | None]
    ) -> set[str]:
        """Mined fills (by request) recorded in one transaction: those settled."""
        now = self.now()
        settled: list[tuple[Request, MinedAttempt, int | None]] = []
        async with self.sessions() as session, session.begin():
            found = await requests.get_each(session, list(mined))
            known = await requests.transactions_of_each(session, list(mined))
            ours = {
                request_id: attempt
                for request_id, attempt in mined.items()
                if [tx.tx_hash for tx in known[request_id] if tx.kind == FILL]
                == [attempt.row.tx_hash]
                and not _may_have_lost_to_winner(found[request_id], attempt.receipt)
            }
            # Nothing read here depends on another fill's writes (each reads its own rows and
            # books events): written together, each table in a statement or a few. The
            # journal's first: the requests' books read which fill was mined.
            with session.no_autoflush:
                for attempt in ours.values():
                    await self.txmanager.record_mined_in(session, attempt)
            await session.flush()
            with session.no_autoflush:
                for request_id, attempt in ours.items():
                    request = found[request_id]
                    fill_time = await self._record_fill_mined(
                        session, request, attempt.row.tx_hash, attempt.receipt, blocks, now=now,
                        known=known[request_id],
                    )  # fmt: skip
                    settled.append((request, attempt, fill_time))
        for request, attempt, fill_time in settled:
            self.txmanager.mined_recorded(attempt)
            self._fill_mined(request, attempt.receipt, fill_time)
        return {request.id for request, _attempt, _fill_time in settled}

    async def _record_fill_mined(
        self,
        session: AsyncSession,
        request: Request,
        tx_hash: str,
        receipt: dict[str, Any],
        blocks: dict[int, BlockHead | None],
        *,
        now: datetime,
        known: list[RequestTransaction],
    ) -> int | None:
        """A mined fill on its request's record (`known`: its transactions, read in this
        transaction), and the request moved on if it was waiting for it; its fill time, if it
        succeeded."""
        block = blocks[int(receipt["blockNumber"])]
        succeeded = receipt["status"] == 1
        await self.record_mined(
            session, request.id, kind=FILL, tx_hash=tx_hash, receipt=receipt, now=now,
            timestamp=block.timestamp if block else None,
            moved=self._delivered(request, receipt) if succeeded else None, known=known,
        )  # fmt: skip
        if request.status != RequestStatus.SUBMITTED:
            return None
        if succeeded and exclusive_until(request) is not None:
            await self._judge_winner(session, request, receipt, now)
        fill_time = None
        if succeeded and block is not None:
            fill_time = _fill_time_of(known, block.timestamp)
            request.fill_time_seconds = fill_time
        target = RequestStatus.SUCCESS if succeeded else RequestStatus.FAILURE
        reason = None if succeeded else "TRANSACTION_REVERTED"
        await requests.move(
            session, request, target, now=now, fail_reason=reason, transactions=known
        )
        return fill_time

    def _fill_mined(self, request: Request, receipt: dict[str, Any], fill_time: int | None) -> None:
        """A mined fill recorded (committed): what it paid out no longer reserved as in
        flight, and its fill time observed."""
        if receipt["status"] == 1:
            self._funds.mined(request.id, int(receipt["blockNumber"]))
        else:
            self._funds.release(request.id)
        if fill_time is not None:
            self.metrics.fill_end_to_end.labels(request.origin_chain_id, self.config.id).observe(
                fill_time
            )

    async def _mined(self, request_id: str, fill_hash: str) -> tuple[str, dict[str, Any]] | None:
        """The fill that got mined and its receipt: any journalled version of our own fill, or
        (found on chain, not journalled) the recorded hash itself."""
        found = await self.txmanager.mined_for(request_id, FILL)
        if found is not None:
            return found[0].tx_hash, found[1]
        journal = await self.txmanager.for_request(request_id, FILL)
        if journal is not None and journal.status != "conflicted":
            return None
        receipt = await self.chain.client.receipt(fill_hash)
        return None if receipt is None else (fill_hash, dict(receipt))

    def _delivered(self, request: Request, receipt: dict[str, Any]) -> Moved:
        """What the fill's recipient got, valued at the prices quotes use now."""
        amount = delivered_amount(request, receipt)
        return self.valued(request.destination_currency, amount, self.now())

    async def _track(self, request: Request) -> None:
        async with self.sessions() as session:
            fills = [
                tx for tx in await requests.transactions_of(session, request.id) if tx.kind == FILL
            ]
        if not await self._settle_mined(request, fills) and await self.txmanager.nonce_taken(
            request.id, FILL
        ):
            await self._after_nonce_taken(request, fills[-1].tx_hash if fills else None)

    async def _settle_mined(self, request: Request, fills: list[RequestTransaction]) -> bool:
        """Record the fill that got mined, if one did; True then."""
        for fill in fills:
            mined = await self._mined(request.id, fill.tx_hash)
            if mined is None:
                continue
            tx_hash, receipt = await self._lost_to_winner(request, *mined)
            number = int(receipt["blockNumber"])
            blocks = {number: await self.chain.client.block_at(number)}
            async with self.sessions() as session, session.begin():
                current = await requests.get(session, request.id)
                assert current is not None
                if tx_hash != fill.tx_hash:
                    await requests.replace_transaction_hash(
                        session, request.id, old=fill.tx_hash, new=tx_hash
                    )
                known = await requests.transactions_of(session, request.id)
                fill_time = await self._record_fill_mined(
                    session, current, tx_hash, receipt, blocks, now=self.now(), known=known
                )
            self._fill_mined(request, receipt, fill_time)
            return True
        return False


class _Unread:
    """The journal not read for a claim in its transaction."""


UNREAD = _Unread()


@dataclass
class FillClaim:
    """A request claimed for a solver in the transaction that makes it pending (the indexer's
    `Claim`). When it is that transaction's only claim, its fill is signed and journalled
    there if it can go at once (`Solver._journal_in`), so it is durable the moment the deposit
    is, and broadcast right after the commit; otherwise (several claimed together, or it
    cannot go yet) the solver's next tick fills it, with the others, as a batch."""

    solver: Solver
    request: Request
    simulation: asyncio.Task[int] | None
    # What the journal held for its fill in that transaction: read there when it is the only
    # claim; several are read after the commit, all in one query with their batch.
    journal: SentTransaction | _Unread | None = field(default_factory=lambda: UNREAD)
    signed: SentTransaction | None = None
    # Read while the claiming transaction is open (its rows expire if it rolls back).
    request_id: str = field(init=False)

    def __post_init__(self) -> None:
        self.request_id = self.request.id

    async def seal(self, session: AsyncSession, *, alone: bool) -> None:
        if not alone:
            return  # filled with the others claimed beside it, in the solver's next batch
        self.journal = await journalled(session, self.request_id, FILL)
        try:
            self.signed = await self.solver._journal_in(session, self)
        except Exception:
            # Never the deposit's undoing: that transaction goes on without the fill (nothing
            # journalled, the key released), and the solver's tick meets the same failure.
            log.exception("fill not journalled with its deposit", request_id=self.request.id)

    async def committed(self) -> None:
        try:
            if self.signed is not None:
                await self.solver._broadcast_journalled(self.request, self.signed)
        finally:
            journal = self.signed if self.signed is not None else self.journal
            self.solver._handed_claim(self.request, journal, self.simulation)

    def dropped(self) -> None:
        if self.signed is not None:
            self.solver._funds.release(self.request_id)
            self.solver.txmanager.journalled_dropped()


def _may_have_lost_to_winner(request: Request, receipt: dict[str, Any]) -> bool:
    """A reverted fill of an order an external solver won: its winner may have filled it
    first (`Solver._lost_to_winner`), which only the request's own settling looks for."""
    return receipt["status"] != 1 and exclusive_until(request) is not None


def _fill_time_of(transactions: list[RequestTransaction], filled_at: int) -> int | None:
    """Seconds from the deposit's block to the fill's block (the listings' fillTime), of a
    request with these transactions."""
    deposits = [
        tx.timestamp for tx in transactions if tx.kind == "deposit" and tx.timestamp is not None
    ]
    return max(0, filled_at - deposits[0]) if deposits else None


def _created(request: Request) -> int:
    """When the request was quoted, in unix seconds: no fill of its order is older."""
    return int(as_utc(request.created_at).timestamp())


def _consume(tasks: Iterable[asyncio.Task[int]]) -> None:
    """Simulations nobody awaits any more: stopped if still running, their outcome taken."""
    for task in tasks:
        if not task.done():
            task.cancel()
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
