"""Gasless executor, one per chain and gas sponsor: sends the accepted /execute calls.

Each call goes out as the sponsor's type-4 transaction through the journal (signed, written,
then broadcast; replaced with higher fees when stuck; never signed twice for one request).
Mined, it records what the sponsor spent; the request's deposit, if the call made one, is the
indexer's to find (`depositing` → `pending`). A call that reverts on chain fails its request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.domain.gasless import PURPOSE
from crossfill.domain.set_code import Authorization
from crossfill.domain.status import RequestStatus
from crossfill.loops import each_on_its_own, run_forever, wait_interval
from crossfill.runtime import ChainRuntime
from crossfill.store import gasless_executions, requests
from crossfill.store.tables import GaslessExecution
from crossfill.workers.replacements import replace_stuck
from crossfill.workers.txmanager import TxManager

log = structlog.get_logger(__name__)
REVERTED_REASON = "TRANSACTION_REVERTED"


class GaslessExecutor:
    def __init__(
        self,
        chain: ChainRuntime,
        sessions: async_sessionmaker[AsyncSession],
        txmanager: TxManager,
        *,
        now: Callable[[], datetime],
        interval_seconds: float,
    ) -> None:
        self.chain = chain
        self.sessions = sessions
        self.txmanager = txmanager
        self.now = now
        self.interval_seconds = interval_seconds
        self.name = f"gasless-{chain.config.id}-{txmanager.sender[:10]}"
        self._wakeup = asyncio.Event()

    async def run(self) -> None:
        await self.txmanager.rebroadcast()
        await run_forever(self.name, self.tick, self._wait)

    async def _wait(self) -> None:
        await wait_interval(self._wakeup, self.interval_seconds)

    async def tick(self) -> None:
        await self.txmanager.hold_signer()  # another process signing for this sponsor
        async with self.sessions() as session:
            open_executions = await gasless_executions.open_on(
                session, self.chain.config.id, self.txmanager.sender, limit=20
            )
        await each_on_its_own(
            self.name, open_executions, self._advance, label=lambda row: row.request_id
        )
        await replace_stuck(
            self.txmanager,
            self.sessions,
            older_than=timedelta(seconds=self.chain.config.replace_stuck_after_seconds),
        )

    async def _advance(self, execution: GaslessExecution) -> None:
        request_id = execution.request_id
        mined = await self.txmanager.mined_for(request_id, PURPOSE)
        if mined is not None:
            await self._settle(execution, *mined)
            return
        journal = await self.txmanager.for_request(request_id, PURPOSE)
        waiting = journal is not None and journal.status != "conflicted"
        if (
            journal is not None
            and waiting
            and not await self.txmanager.nonce_taken(request_id, PURPOSE)
        ):
            if execution.state == gasless_executions.QUEUED:
                await self._submitted(request_id, journal.tx_hash)  # sent before a crash
            return
        await self._send(execution)

    async def _send(self, execution: GaslessExecution) -> None:
        authorizations = [
            Authorization.from_json(stored).for_signing() for stored in execution.authorization_list
        ]
        sent = await self.txmanager.send(
            to=execution.to_address,
            data=bytes.fromhex(execution.call_data[2:]),
            value=int(execution.value),
            gas_limit=execution.gas_limit,
            purpose=PURPOSE,
            request_id=execution.request_id,
            authorization_list=authorizations,
        )
        await self._submitted(execution.request_id, sent.tx_hash)
        log.info("gasless execution sent", request_id=execution.request_id, tx_hash=sent.tx_hash)

    async def _submitted(self, request_id: str, tx_hash: str) -> None:
        now = self.now()
        async with self.sessions() as session, session.begin():
            await gasless_executions.mark_submitted(session, request_id, tx_hash, now=now)
            await requests.record_transaction(
                session,
                request_id,
                kind="deposit",
                chain_id=self.chain.config.id,
                tx_hash=tx_hash,
                status="pending",
                now=now,
            )

    async def _settle(self, execution: GaslessExecution, row: Any, receipt: dict[str, Any]) -> None:
        succeeded = receipt["status"] == 1
        spent = int(receipt["gasUsed"]) * int(receipt["effectiveGasPrice"])
        now = self.now()
        async with self.sessions() as session, session.begin():
            await gasless_executions.settle(
                session,
                execution.request_id,
                succeeded=succeeded,
                tx_hash=row.tx_hash,
                spent_wei=spent,
                now=now,
            )
            if succeeded:
                return
            await requests.record_transaction(
                session,
                execution.request_id,
                kind="deposit",
                chain_id=self.chain.config.id,
                tx_hash=row.tx_hash,
                status="failure",
                now=now,
                block_number=int(receipt["blockNumber"]),
                fee=spent,
            )
            request = await requests.get(session, execution.request_id)
            if request is not None and request.status == RequestStatus.DEPOSITING:
                await requests.move(
                    session, request, RequestStatus.FAILURE, now=now, fail_reason=REVERTED_REASON
                )
        log.warning("gasless execution reverted", request_id=execution.request_id)
