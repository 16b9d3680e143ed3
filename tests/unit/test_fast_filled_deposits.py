"""The indexer and a fast-filled request: when the deposit it was filled on confirms, the
deposit is recorded and the request, already under way or filled, is left alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import insert, select

from crossfill.kinds.evm.indexer import Indexer
from crossfill.store import deposits, requests
from crossfill.store.fast_fills import FAST_FILL
from crossfill.store.tables import Deposit, Request
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support.synthetic import synthetic_requests
from tests.unit.worker_world import START, chain_world

DEPOSIT_BLOCK = 60  # 41 blocks deep at the fake head: past every tier


@pytest.mark.parametrize("status", ["pending", "submitted", "success"])
async def test_a_deposit_confirming_under_a_fast_fill_leaves_the_request_alone(
    tmp_path: Path, status: str
) -> None:
    async with chain_world(tmp_path) as base:
        (row,) = synthetic_requests(1, start=START).requests
        row.update(
            status=status,
            origin_chain_id=base.config.id,
            origin_currency=NATIVE_EVM_ADDRESS,
            amount_in=str(10**17),
            expires_at=START.replace(year=START.year + 1),
            features_mask=FAST_FILL,
        )
        deposit = {
            "chain_id": base.config.id,
            "tx_hash": "0x" + "de" * 32,
            "log_index": 0,
            "block_number": DEPOSIT_BLOCK,
            "block_hash": "0x" + f"{DEPOSIT_BLOCK:064x}",  # the fake chain's block there
            "order_id": row["order_id"],
            "depositor": row["user_address"],
            "currency": NATIVE_EVM_ADDRESS,
            "amount": str(10**17),
            "state": deposits.SEEN,
            "created_at": START,
        }
        async with base.engine.begin() as connection:
            await connection.execute(insert(Request), [row])
            await connection.execute(insert(Deposit), [deposit])
        indexer = Indexer(
            base.runtime, base.sessions, now=base.clock, interval_seconds=0.1, metrics=base.metrics
        )
        await indexer.tick()  # the head (block 100) is deep enough: the deposit confirms
        async with base.sessions() as session:
            confirmed = await session.scalar(select(Deposit))
            request = await session.get(Request, row["id"])
            recorded = await requests.transactions_of(session, row["id"])
        assert confirmed is not None and request is not None
        assert (confirmed.state, confirmed.outcome, confirmed.request_id) == (
            deposits.CONFIRMED,
            "ACCEPTED",
            row["id"],
        )
        assert request.status == status  # not moved back to pending, nor failed
        assert [(tx.kind, tx.status, tx.sender) for tx in recorded] == [
            ("deposit", "success", row["user_address"])
        ]
