"""A deposit's parts in the store: an accepted overpayment is split into what pays its request
and an excess refunded on its own; a deposit given up to a reorg and found again is judged
afresh, its excess folded back unless that excess's refund already started."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.domain.status import RequestStatus
from crossfill.kinds.evm.depository_logs import DepositLog
from crossfill.store import deposits
from crossfill.store.db import session_factory
from crossfill.store.tables import Deposit, Request
from tests.support.synthetic import synthetic_requests

NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)
CHAIN = 900001
QUOTED = 10**16


def _log(block: int) -> DepositLog:
    return DepositLog(
        tx_hash="0x" + "ab" * 32, log_index=3, block_number=block,
        block_hash="0x" + f"{block:064x}", order_id="0x" + "0c" * 32,
        depositor="0x" + "de" * 20, currency="0x" + "00" * 20, amount=3 * QUOTED,
    )  # fmt: skip


async def _parts(session: AsyncSession) -> list[Deposit]:
    return list(await session.scalars(select(Deposit).order_by(Deposit.part)))


async def _overpaid_and_accepted(session: AsyncSession) -> str:
    (row,) = synthetic_requests(1, start=NOW).requests
    row.update(
        status=RequestStatus.WAITING, order_id="0x" + "0c" * 32, origin_chain_id=CHAIN,
        amount_in=str(QUOTED), expires_at=NOW.replace(year=NOW.year + 1),
    )  # fmt: skip
    await session.execute(insert(Request), [row])
    request = await session.get(Request, row["id"])
    deposit = await deposits.record_seen(session, CHAIN, _log(10), NOW, state=deposits.CONFIRMED)
    assert deposit is not None and request is not None
    judged = await deposits.place(
        session, deposit, request, DepositVerdict.ACCEPTED, refund_cost=10**14
    )
    assert (judged.decides, judged.excess) == (True, 2 * QUOTED)
    return str(row["id"])


@pytest.mark.parametrize("excess_refund_started", [False, True])
async def test_a_revived_deposit_is_judged_afresh(
    engine: AsyncEngine, excess_refund_started: bool
) -> None:
    async with session_factory(engine)() as session, session.begin():
        request_id = await _overpaid_and_accepted(session)
    async with session_factory(engine)() as session, session.begin():
        whole, excess = await _parts(session)
        assert [(p.amount, p.outcome, p.request_id) for p in (whole, excess)] == [
            (str(QUOTED), "ACCEPTED", request_id),
            (str(2 * QUOTED), "AMOUNT_ABOVE_QUOTE", request_id),
        ]
        assert await deposits.due_for_refund(session, CHAIN) == [excess]
        for part in (whole, excess):
            part.state = deposits.REORGED  # the reorg watch gives both up
        if excess_refund_started:
            excess.refund_status = "submitted"
    async with session_factory(engine)() as session, session.begin():
        revived = await deposits.record_seen(session, CHAIN, _log(12), NOW)
        assert revived is not None
    async with session_factory(engine)() as session:
        parts = await _parts(session)
    whole = parts[0]
    assert (whole.state, whole.outcome, whole.request_id) == (deposits.SEEN, None, None)
    if excess_refund_started:
        assert [p.amount for p in parts] == [str(QUOTED), str(2 * QUOTED)]
    else:
        assert [p.amount for p in parts] == [str(3 * QUOTED)]
