"""Confirmed deposits stay watched until final (`finality_blocks` deep).

One canonical-hash check per new head covers them all: a block still in the chain vouches for
every block below it, so the newest watched deposit is checked first and the walk down stops at
the first block that still matches. A deposit whose block changed is looked up by transaction:
re-included elsewhere, it follows its new block; gone, it is lost to the reorg and its request
rolls back to waiting or records DEPOSIT_REORGED (`domain.reorgs`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.domain.reorgs import DEPOSIT_REORGED, ReorgAction, after_confirmation
from crossfill.domain.status import RequestStatus
from crossfill.kinds.evm.client import BlockHead
from crossfill.kinds.evm.depository_logs import to_hex
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.store import books, deposits, requests
from crossfill.store.db import as_utc
from crossfill.store.tables import Deposit, Request

log = structlog.get_logger(__name__)


class ReorgWatch:
    def __init__(
        self,
        chain: ChainRuntime,
        sessions: async_sessionmaker[AsyncSession],
        *,
        now: Callable[[], datetime],
    ) -> None:
        self.chain = chain
        self.config = chain.config
        self.sessions = sessions
        self.now = now
        self._checked_head: str | None = None

    async def check(self, head: BlockHead) -> None:
        if head.hash == self._checked_head:
            return
        async with self.sessions() as session:
            watched = await deposits.confirmed_since(
                session, self.config.id, head.number - self.config.finality_blocks
            )
        for deposit in watched:
            block = await self.chain.client.block_at(deposit.block_number)
            if block is not None and block.hash == deposit.block_hash:
                break
            await self._recheck(deposit)
        self._checked_head = head.hash

    async def _recheck(self, deposit: Deposit) -> None:
        receipt = await self.chain.client.receipt(deposit.tx_hash)
        async with self.sessions() as session, session.begin():
            row = await session.get(Deposit, deposit.id)
            assert row is not None
            if receipt is not None and receipt["status"] == 1:
                row.block_number = int(receipt["blockNumber"])
                row.block_hash = to_hex(receipt["blockHash"])
                log.info("confirmed deposit re-included", tx_hash=row.tx_hash)
                return
            row.state = deposits.REORGED
            await books.reverse(session, books.deposit_event(row), now=self.now())
            if deposits.decides(row):
                await self._request_lost_deposit(session, row)

    async def _request_lost_deposit(self, session: AsyncSession, deposit: Deposit) -> None:
        assert deposit.request_id is not None
        request = await session.get(Request, deposit.request_id, with_for_update=True)
        assert request is not None
        now = self.now()
        leased = request.lease_expires_at is not None and (as_utc(request.lease_expires_at) > now)
        action = after_confirmation(RequestStatus(request.status), leased=leased)
        log.error(
            "confirmed deposit reorged out",
            chain_id=self.config.id,
            tx_hash=deposit.tx_hash,
            request_id=request.id,
            status=request.status,
            action=str(action),
        )
        if action is ReorgAction.ROLL_BACK:
            await requests.forget_transaction(
                session, request.id, kind="deposit", tx_hash=deposit.tx_hash
            )
            await requests.move(session, request, RequestStatus.WAITING, now=now, reorg=True)
        elif action is ReorgAction.RECORD:
            request.fail_reason = DEPOSIT_REORGED
            request.updated_at = now
            await requests.publish(session, request, now=now)
