"""Sponsor collector, one per chain: pulls each due sponsor payment into the solver's wallet.

The sponsor approved the solver; the solver sends `transferFrom(sponsor, solver, amount)`. The
transaction is journalled per request like fills and refunds, so a restart resumes it rather
than pulling twice; a pull that fails (allowance withdrawn) is marked failed and logged.
"""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.contracts import calldata
from crossfill.kinds.evm.one_call_jobs import Call, OneCallWorker
from crossfill.store import sponsor_payments
from crossfill.store.tables import SponsorPayment


@dataclass(eq=False)
class SponsorCollector(OneCallWorker[SponsorPayment]):
    job = "sponsor-collector"
    purpose = "sponsor"
    what = "sponsor payment"

    jobs = sponsor_payments.SPONSOR_PAYMENTS

    def request_of(self, job: SponsorPayment) -> str:
        return job.request_id

    def call(self, job: SponsorPayment) -> Call:
        solver = self.txmanager.account.address
        data = calldata.erc20_transfer_from(job.sponsor, solver, int(job.amount))
        return Call(job.currency, data)
