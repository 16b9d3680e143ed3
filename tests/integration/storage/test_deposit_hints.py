"""Deposit hints between processes: delivered over PostgreSQL NOTIFY, and never an error for
the client that sent the hint when the database cannot take it."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.devnet.child_process import free_port
from crossfill.store import deposit_hints
from crossfill.store.db import create_engine
from tests.integration.storage.conftest import _postgres_url

TX_HASH = "0x" + "ab" * 32


@pytest.mark.postgres
async def test_a_forwarded_hint_reaches_the_listener(postgres_engine: AsyncEngine) -> None:
    received: asyncio.Queue[tuple[int, str]] = asyncio.Queue()
    listener = await deposit_hints.listen(
        postgres_engine.url.render_as_string(hide_password=False),
        lambda chain_id, tx_hash: received.put_nowait((chain_id, tx_hash)),
    )
    assert listener is not None
    try:
        await deposit_hints.forward(postgres_engine, 900001, TX_HASH)
        assert await asyncio.wait_for(received.get(), 5) == (900001, TX_HASH)
    finally:
        await listener.close()


async def test_sqlite_has_no_listener_and_forwarding_is_a_no_op(tmp_path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'x.db'}"
    assert await deposit_hints.listen(url, lambda *_: None) is None
    engine = create_engine(url)
    try:
        await deposit_hints.forward(engine, 900001, TX_HASH)
    finally:
        await engine.dispose()


async def test_an_unreachable_database_does_not_fail_the_hint() -> None:
    unreachable = _postgres_url("nothing").replace(":5432/", f":{free_port()}/")
    engine = create_engine(unreachable)
    try:
        await deposit_hints.forward(engine, 900001, TX_HASH)  # logged, not raised
    finally:
        await engine.dispose()
