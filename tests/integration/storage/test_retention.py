"""`crossfill db prune-quotes`: only long-expired quotes nobody acted on go, with their quoted
app-fee shares and sponsor payments; everything a deposit, a transaction or an event refers to
stays."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.store import retention
from crossfill.store.db import session_factory
from crossfill.store.tables import AppFee, Deposit, OutboxEvent, Request, SponsorPayment
from tests.integration.storage.request_rows import ADDRESS, request_row

NOW = datetime(2026, 11, 27, 12, tzinfo=UTC)
CUTOFF = NOW - timedelta(days=7)
LONG_AGO = NOW - timedelta(days=30)


def _request(index: int, **columns: Any) -> dict[str, Any]:
    return {**request_row(index, LONG_AGO), **columns}


def _app_fee(request_id: str, state: str) -> dict[str, Any]:
    return {
        "request_id": request_id,
        "recipient": ADDRESS,
        "chain_id": 1,
        "currency": ADDRESS,
        "bps": 10,
        "quoted_amount": "1",
        "amount_usd_micros": 1,
        "state": state,
        "updated_at": LONG_AGO,
    }


def _sponsor_payment(request_id: str, state: str) -> dict[str, Any]:
    return {
        "request_id": request_id,
        "chain_id": 1,
        "currency": ADDRESS,
        "sponsor": ADDRESS,
        "amount": "1",
        "amount_usd_micros": 1,
        "state": state,
        "updated_at": LONG_AGO,
    }


def _deposit(index: int, order_id: str, request_id: str | None) -> dict[str, Any]:
    return {
        "chain_id": 1,
        "tx_hash": f"0x{index:064x}",
        "log_index": 0,
        "block_number": 1,
        "block_hash": f"0x{index:064x}",
        "order_id": order_id,
        "depositor": ADDRESS,
        "currency": ADDRESS,
        "amount": "100",
        "state": "confirmed",
        "request_id": request_id,
        "created_at": LONG_AGO,
    }


async def test_only_long_expired_quotes_nobody_acted_on_are_pruned(engine: AsyncEngine) -> None:
    prunable = [_request(1), _request(2), _request(3)]
    kept = {
        "expired recently": _request(10, expires_at=NOW - timedelta(days=1)),
        "deposited": _request(11, status="success"),
        "deposit matched by order id only": _request(12),
        "deposit matched by request": _request(13),
        "owns a deposit address": _request(14, deposit_address=ADDRESS),
        "a deposit address's child": _request(15, parent_request_id=f"0x{14:064x}"),
        "an app fee owed": _request(16),
        "a sponsor payment due": _request(17),
        "a status event": _request(18),
    }
    requests = [*prunable, *kept.values()]
    by_name = {name: row["id"] for name, row in kept.items()}
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        await session.execute(insert(Request), requests)
        await session.execute(
            insert(AppFee),
            [
                _app_fee(prunable[0]["id"], retention.QUOTED),
                _app_fee(by_name["an app fee owed"], "owed"),
            ],
        )
        await session.execute(
            insert(SponsorPayment),
            [
                _sponsor_payment(prunable[1]["id"], retention.QUOTED),
                _sponsor_payment(by_name["a sponsor payment due"], "due"),
            ],
        )
        await session.execute(
            insert(Deposit),
            [
                _deposit(1, kept["deposit matched by order id only"]["order_id"], None),
                _deposit(
                    2,
                    kept["deposit matched by request"]["order_id"],
                    by_name["deposit matched by request"],
                ),
            ],
        )
        await session.execute(
            insert(OutboxEvent),
            [
                {
                    "request_id": by_name["a status event"],
                    "event": "request.status.updated",
                    "payload": {},
                    "created_at": LONG_AGO,
                }
            ],
        )

    assert await retention.count_prunable(sessions, CUTOFF) == len(prunable)
    assert await retention.prune_expired_quotes(sessions, CUTOFF, batch=2) == len(prunable)
    assert await retention.prune_expired_quotes(sessions, CUTOFF) == 0

    async with sessions() as session:
        left = set(await session.scalars(select(Request.id)))
        fees = await session.scalar(select(func.count()).select_from(AppFee))
        payments = await session.scalar(select(func.count()).select_from(SponsorPayment))
    assert left == set(by_name.values())
    assert (fees, payments) == (1, 1)  # the owed share and the due payment
