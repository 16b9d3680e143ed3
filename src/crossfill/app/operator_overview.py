"""What an operator checks in the store at a glance: the requests in each status (those
waiting for a deposit, those pending a fill), the deposits due for refund and those kept, and
the webhook deliveries that failed for good."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.status import RequestStatus
from crossfill.store import deposits, outbox, requests
from crossfill.store.outbox import FailedDeliveries


@dataclass(frozen=True)
class StoredOverview:
    requests_by_status: Mapping[RequestStatus, int]  # every status, 0 for none
    refunds_due: Mapping[int, int]  # chain id -> deposits due for refund
    kept_deposits: Mapping[tuple[int, str], int]  # (chain id, reason) -> deposits kept
    webhook_failures: Sequence[FailedDeliveries]


async def stored_overview(session: AsyncSession) -> StoredOverview:
    found = await requests.count_by_status(session)
    return StoredOverview(
        requests_by_status={status: found.get(status, 0) for status in RequestStatus},
        refunds_due=await deposits.refunds_due_counts(session),
        kept_deposits=await deposits.kept_counts(session),
        webhook_failures=await outbox.failed_deliveries(session),
    )
