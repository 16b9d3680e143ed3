"""Deposit hints between processes: delivered over PostgreSQL NOTIFY, and never an error for
the client that sent the hint when the database cannot take it."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.devnet.child_process import free_port
from crossfill.loops import stop_tasks
from crossfill.store import deposit_hints
from tests.support.database import engine_of, postgres_database_url, sqlite_url

TX_HASH = "0x" + "ab" * 32
CLIENT = "ip:2001:db8:1:2::/64"  # a client name with colons of its own


async def _listening(
    engine: AsyncEngine,
) -> tuple[asyncio.Task[None], asyncio.Queue[tuple[int, str, str]]]:
    received: asyncio.Queue[tuple[int, str, str]] = asyncio.Queue()
    listening = asyncio.create_task(
        deposit_hints.listen(
            engine.url.render_as_string(hide_password=False),
            lambda chain_id, tx_hash, client: received.put_nowait((chain_id, tx_hash, client)),
        )
    )
    return listening, received


async def _forwarded_until_received(
    engine: AsyncEngine, received: asyncio.Queue[tuple[int, str, str]]
) -> tuple[int, str, str]:
    """Forward a hint until the listener gets one (it may not be listening yet: notifications
    sent before are lost, by design)."""
    async with asyncio.timeout(10):
        while True:
            await deposit_hints.forward(engine, 900001, TX_HASH, CLIENT)
            try:
                async with asyncio.timeout(0.2):
                    return await received.get()
            except TimeoutError:
                continue


@pytest.mark.postgres
async def test_a_forwarded_hint_reaches_the_listener(postgres_engine: AsyncEngine) -> None:
    listening, received = await _listening(postgres_engine)
    try:
        forwarded = await _forwarded_until_received(postgres_engine, received)
        assert forwarded == (900001, TX_HASH, CLIENT)
    finally:
        await stop_tasks([listening])


@pytest.mark.postgres
async def test_the_listener_listens_again_after_the_server_ends_its_connection(
    postgres_engine: AsyncEngine,
) -> None:
    """A server restart or failover ends the LISTEN connection: hints forwarded after it is
    back reach the listener again (before, they were lost until the process restarted)."""
    listening, received = await _listening(postgres_engine)
    try:
        await _forwarded_until_received(postgres_engine, received)
        async with postgres_engine.connect() as connection:
            ended = await connection.execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                    "AND query LIKE 'LISTEN%'"
                )
            )
            assert ended.all() == [(True,)]
        forwarded = await _forwarded_until_received(postgres_engine, received)
        assert forwarded == (900001, TX_HASH, CLIENT)
        assert not listening.done()
    finally:
        await stop_tasks([listening])


async def test_sqlite_has_no_listener_and_forwarding_is_a_no_op(tmp_path) -> None:
    url = sqlite_url(tmp_path / "x.db")
    async with asyncio.timeout(5):
        await deposit_hints.listen(url, lambda *_: None)  # returns at once
    async with engine_of(url) as engine:
        await deposit_hints.forward(engine, 900001, TX_HASH, CLIENT)


async def test_an_unreachable_database_does_not_fail_the_hint() -> None:
    unreachable = postgres_database_url("nothing").replace(":5432/", f":{free_port()}/")
    async with engine_of(unreachable) as engine:
        await deposit_hints.forward(engine, 900001, TX_HASH, CLIENT)  # logged, not raised
