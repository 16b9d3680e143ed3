"""Permit depositor, one per chain: sends the deposit of each signed authorization
(`usePermit`) to the chain's Depository, so the user needs no transaction of their own.

Journalled per request like fills and refunds, so a restart resumes the deposit rather than
sending it twice (and the token would refuse a second use anyway). The indexer then sees the
Depository's deposit event as for any other deposit. An authorization that reverts (funds
moved, expired) or expires before it is sent is marked failed; the request then expires
unfunded: nothing was taken from the user.
"""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.contracts import calldata
from crossfill.kinds.evm.one_call_jobs import Call, OneCallWorker
from crossfill.store import commit_signals, permit_deposits
from crossfill.store.tables import PermitDeposit

# An authorization this close to its end is not sent: it could not be mined in time.
SEND_MARGIN_SECONDS = 30


@dataclass(eq=False)
class PermitDepositor(OneCallWorker[PermitDeposit]):
    job = "permit-depositor"
    woken_by = commit_signals.PERMIT_DEPOSITS
    purpose = "permit"
    what = "permit deposit"

    jobs = permit_deposits.PERMIT_DEPOSITS

    def unsendable(self, job: PermitDeposit) -> str | None:
        if job.valid_before <= self.now().timestamp() + SEND_MARGIN_SECONDS:
            return "the authorization expires before it could be mined"
        return None

    def request_of(self, job: PermitDeposit) -> str:
        return job.request_id

    def call(self, job: PermitDeposit) -> Call:
        data = calldata.deposit_erc20_with_authorization(
            job.depositor,
            job.currency,
            int(job.amount),
            job.valid_before,
            bytes.fromhex(job.order_id[2:]),
            bytes.fromhex(job.signature[2:]),
        )
        return Call(self.config.contracts.depository, data)
