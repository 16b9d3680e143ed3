"""Gasless executor, one per chain and gas sponsor: sends the accepted /execute calls.

Each call goes out as the sponsor's type-4 transaction through the journal (signed, written,
then broadcast; replaced with higher fees when stuck; never signed twice for one request).
Mined, it records what the sponsor spent, and `domain.gasless.settlement` says what follows:
a call that paid its quoted request leaves it to the indexer (`depositing` → `pending`); one
that did not (it reverted, or mined without depositing for the order) fails it; a standalone
call succeeds or fails with its transaction. A revert is replayed on the block before to read
what the contract said.

Before a call is signed its sponsor's balance is checked: read at the head once per tick that
has a call to send (a chain failure ends the tick, retried with the loop's backoff), less what
the sponsor's transactions in flight may take (`kinds.evm.key_funds`). A call the sponsor
cannot pay (its value and all its gas at the offered fee) is not signed, as a node would
refuse it: it stays queued, its request `depositing`, and the sponsor is shown low on `/readyz`,
`/chains` and `crossfill_key_gas_low` with what it needs (`ChainState.sponsor_waiting`), which
the chain's gas keeper tops it up to from the solver. It is sent once the sponsor can pay.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import structlog

from crossfill.contracts.reverts import decode_revert
from crossfill.domain.gasless import (
    PURPOSE,
    FailureDetails,
    MinedExecution,
    RevertFacts,
    Settlement,
    settlement,
)
from crossfill.domain.key_gas import SponsorWaiting
from crossfill.domain.set_code import Authorization
from crossfill.domain.status import RequestStatus
from crossfill.errors import ChainError, ChainUnreachable, InsufficientFunds
from crossfill.kinds.evm.call_payments import payments_in
from crossfill.kinds.evm.journalled_worker import JournalledWorker
from crossfill.kinds.evm.receipt_outcomes import fee_paid
from crossfill.kinds.evm.replacements import replace_stuck
from crossfill.kinds.evm.txmanager import InFlight, Mined
from crossfill.loops import each_on_its_own, run_until_woken
from crossfill.store import commit_signals, gasless_executions, requests
from crossfill.store.tables import GaslessExecution, Request

log = structlog.get_logger(__name__)


@dataclass(eq=False)
class GaslessExecutor(JournalledWorker):
    job = "gasless"
    # The sponsor's role (`gasless-sponsor-N`), as /readyz and the metrics name it.
    role: str = "gasless-sponsor"
    # In a tick: the balance each execution left waiting for funds needs.
    _needed: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        """One per chain and gas sponsor: `gasless-<chain id>-<sponsor's address start>`."""
        return f"{super().name}-{self.txmanager.sender[:10]}"

    async def run(self) -> None:
        await self.txmanager.rebroadcast()
        await run_until_woken(
            self.name, self.tick, commit_signals.GASLESS_EXECUTIONS, self.interval_seconds
        )

    async def tick(self) -> None:
        await self.txmanager.hold_signer()  # another process signing for this sponsor
        async with self.sessions() as session:
            open_executions = await gasless_executions.open_on(
                session, self.config.id, self.txmanager.sender, limit=20
            )
        if any(row.state == gasless_executions.QUEUED for row in open_executions):
            await self._read_balance()
        self._needed = []
        await each_on_its_own(
            self.name, open_executions, self._advance, label=lambda row: row.request_id
        )
        self._show_waiting()
        await replace_stuck(
            self.txmanager,
            self.sessions,
            older_than=timedelta(seconds=self.config.replace_stuck_after_seconds),
        )

    async def _advance(self, execution: GaslessExecution) -> None:
        request_id = execution.request_id
        attempt = await self.txmanager.attempt(request_id, PURPOSE)
        if isinstance(attempt, Mined):
            await self._settle(execution, attempt.row, attempt.receipt)
            return
        if isinstance(attempt, InFlight):
            if execution.state == gasless_executions.QUEUED:
                await self._submitted(request_id, attempt.row.tx_hash)  # sent before a crash
            return
        await self._send(execution)

    async def _read_balance(self) -> None:
        """The sponsor's balance at the head, what its transaction manager checks a call
        against before signing it (a chain failure ends the tick: the loop's backoff)."""
        head = self.chain.state.head
        if head is None:
            return  # nothing read of the chain yet: the node answers for itself
        (balance,) = await self.chain.client.native_balances([self.txmanager.sender], head.number)
        self.chain.state.sponsor_balances[self.txmanager.sender] = balance

    def _show_waiting(self) -> None:
        """The balance the costliest execution left waiting for funds needs, on the chain's
        state (the gas keeper's top-up, `/readyz`), or nothing when none waits."""
        sender, state = self.txmanager.sender, self.chain.state
        balance = state.sponsor_balance(sender)
        if not self._needed or balance is None:
            state.sponsor_waiting.pop(sender, None)
            return
        state.sponsor_waiting[sender] = SponsorWaiting(self.role, balance, max(self._needed))

    async def _send(self, execution: GaslessExecution) -> None:
        authorizations = [
            Authorization.from_json(stored).for_signing() for stored in execution.authorization_list
        ]
        try:
            sent = await self.txmanager.send(
                to=execution.to_address,
                data=bytes.fromhex(execution.call_data[2:]),
                value=int(execution.value),
                gas_limit=execution.gas_limit,
                purpose=PURPOSE,
                request_id=execution.request_id,
                authorization_list=authorizations,
            )
        except InsufficientFunds as short:
            balance = self.chain.state.sponsor_balance(self.txmanager.sender) or 0
            self._needed.append(balance + short.shortfall)
            if (
                len(self._needed) == 1
                and self.chain.state.sponsor_waiting.get(self.txmanager.sender) is None
            ):
                log.warning(
                    "a gasless execution waits: its sponsor cannot pay it",
                    chain_id=self.config.id, key=self.role, request_id=execution.request_id,
                    balance=balance, shortfall=short.shortfall,
                )  # fmt: skip
            return
        await self._submitted(execution.request_id, sent.tx_hash)
        log.info("gasless execution sent", request_id=execution.request_id, tx_hash=sent.tx_hash)

    async def _submitted(self, request_id: str, tx_hash: str) -> None:
        now = self.now()
        async with self.sessions() as session, session.begin():
            await gasless_executions.mark_submitted(session, request_id, tx_hash, now=now)
            # The indexer may have seen it mined before this commit.
            await self.record_sent(
                session, request_id, kind="deposit", tx_hash=tx_hash, now=now, keep_mined=True
            )

    async def _settle(self, execution: GaslessExecution, row: Any, receipt: dict[str, Any]) -> None:
        succeeded = receipt["status"] == 1
        block = int(receipt["blockNumber"])
        async with self.sessions() as session:
            request = await requests.get(session, execution.request_id)
        assert request is not None
        mined = MinedExecution(
            tx_hash=row.tx_hash,
            succeeded=succeeded,
            paid_request=succeeded and self._pays(request, receipt),
            standalone=execution.standalone,
        )
        revert = None if succeeded else await self._revert(execution, block)
        outcome = settlement(mined, revert)
        mined_block = await self.chain.client.block_at(block) if outcome.status else None
        timestamp = mined_block.timestamp if mined_block is not None else None
        await self._record(execution, row.tx_hash, receipt, outcome, timestamp)
        if outcome.status is RequestStatus.FAILURE:
            log.warning(
                "gasless execution failed its request",
                request_id=execution.request_id,
                fail_reason=outcome.fail_reason,
            )

    def _pays(self, request: Request, receipt: dict[str, Any]) -> bool:
        contracts = self.config.contracts
        payments = payments_in(
            receipt["logs"], depository=contracts.depository, router=contracts.router
        )
        return payments.pays(order_id=request.order_id, request_id=request.id)

    async def _revert(self, execution: GaslessExecution, block: int) -> RevertFacts | None:
        """What the reverted call said: the same call replayed on the state before its block
        (the transactions before it in that block are not replayed). None when the replay
        does not revert there or the node cannot replay it; an unreachable node is retried."""
        call: dict[str, Any] = {
            "from": execution.sponsor,
            "to": execution.to_address,
            "data": execution.call_data,
            "value": hex(int(execution.value)),
            "gas": hex(execution.gas_limit),
        }
        if execution.authorization_list:
            call["authorizationList"] = [
                Authorization.from_json(stored).for_rpc() for stored in execution.authorization_list
            ]
        try:
            replayed = await self.chain.client.simulate(call, block=block - 1)
        except ChainUnreachable:
            raise
        except ChainError as exc:
            log.warning(
                "reverted call not replayed", request_id=execution.request_id, error=str(exc)
            )
            return None
        if replayed.succeeded:
            return None
        reason = decode_revert(replayed.returned)
        return RevertFacts(reason.name, reason.message, replayed.returned)

    async def _record(
        self,
        execution: GaslessExecution,
        tx_hash: str,
        receipt: dict[str, Any],
        outcome: Settlement,
        timestamp: int | None,
    ) -> None:
        """In one transaction: the sponsor's spend, the call's transaction, and the request
        moved as `outcome` says (when it is still `depositing`)."""
        succeeded = receipt["status"] == 1
        spent = fee_paid(receipt)
        now = self.now()
        async with self.sessions() as session, session.begin():
            await gasless_executions.settle(
                session,
                execution.request_id,
                succeeded=succeeded,
                tx_hash=tx_hash,
                spent_wei=spent,
                now=now,
            )
            if outcome.status is None:
                return  # the deposit's own path (the indexer) records and moves it
            # A standalone call's transaction is both its in and its out, as a same-chain
            # request's; a call that failed its request is only that request's in.
            kinds = ("deposit", "fill") if outcome.status is RequestStatus.SUCCESS else ("deposit",)
            for kind in kinds:
                await self.record_mined(
                    session, execution.request_id, kind=kind, tx_hash=tx_hash, receipt=receipt,
                    now=now, timestamp=timestamp, priced=False,
                )  # fmt: skip
            request = await requests.get(session, execution.request_id)
            if request is None or request.status != RequestStatus.DEPOSITING:
                return  # the indexer saw a deposit for it meanwhile: that path goes on
            request.fail_details = _details(outcome.details)
            await requests.move(
                session, request, outcome.status, now=now, fail_reason=outcome.fail_reason
            )


def _details(details: FailureDetails | None) -> dict[str, Any] | None:
    return None if details is None else details.to_json()
