"""Permit depositor, one per chain: sends the deposit of each signed authorization
(`usePermit`) to the chain's Depository, so the user needs no transaction of their own.

Journalled per request like fills and refunds, so a restart resumes the deposit rather than
sending it twice (and the token would refuse a second use anyway). The indexer then sees the
Depository's deposit event as for any other deposit. An authorization that reverts (funds
moved, expired) or expires before it is sent is marked failed; the request then expires
unfunded: nothing was taken from the user.
"""

from __future__ import annotations

import structlog

from crossfill.contracts import calldata
from crossfill.errors import Reverted
from crossfill.kinds.evm.journalled_worker import JournalledWorker
from crossfill.kinds.evm.txmanager import InFlight, Mined
from crossfill.loops import each_on_its_own
from crossfill.store import commit_signals, permit_deposits
from crossfill.store.tables import PermitDeposit

log = structlog.get_logger(__name__)
PURPOSE = "permit"
# An authorization this close to its end is not sent: it could not be mined in time.
SEND_MARGIN_SECONDS = 30


class PermitDepositor(JournalledWorker):
    job = "permit-depositor"
    woken_by = commit_signals.PERMIT_DEPOSITS

    async def tick(self) -> None:
        await self.txmanager.hold_signer()  # another process signing: leave deposits to it
        async with self.sessions() as session:
            signed = await permit_deposits.signed_on(session, self.config.id, limit=20)
        await each_on_its_own(self.name, signed, self._deposit, label=lambda row: row.request_id)

    async def _settle(self, request_id: str, state: str, tx_hash: str | None) -> None:
        async with self.sessions() as session, session.begin():
            await permit_deposits.settle(
                session, request_id, state=state, tx_hash=tx_hash, now=self.now()
            )

    async def _deposit(self, permit: PermitDeposit) -> None:
        attempt = await self.txmanager.attempt(permit.request_id, PURPOSE)
        if isinstance(attempt, Mined):
            sent = attempt.succeeded
            state = permit_deposits.SENT if sent else permit_deposits.FAILED
            await self._settle(permit.request_id, state, attempt.row.tx_hash)
            if not sent:
                log.error("permit deposit reverted", request_id=permit.request_id)
            return
        if isinstance(attempt, InFlight):
            return  # sent, not mined yet
        if permit.valid_before <= self.now().timestamp() + SEND_MARGIN_SECONDS:
            log.warning("permit expired unsent", request_id=permit.request_id)
            await self._settle(permit.request_id, permit_deposits.FAILED, None)
            return
        depository = self.config.contracts.depository
        data = calldata.deposit_erc20_with_authorization(
            permit.depositor,
            permit.currency,
            int(permit.amount),
            permit.valid_before,
            bytes.fromhex(permit.order_id[2:]),
            bytes.fromhex(permit.signature[2:]),
        )
        try:
            gas = await self.gas_for(depository, data)
        except Reverted as revert:
            log.error(
                "permit deposit refused by the chain",
                request_id=permit.request_id,
                reason=revert.reason.message,
            )
            await self._settle(permit.request_id, permit_deposits.FAILED, None)
            return
        await self.send_estimated(
            depository, data, gas, purpose=PURPOSE, request_id=permit.request_id
        )
