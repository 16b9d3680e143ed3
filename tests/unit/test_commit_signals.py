"""A writer marks its session with the kind of row it stored; the workers registered for that
kind are woken once the session commits, never when it rolls back, nor for another kind."""

from __future__ import annotations

import asyncio
import contextlib

from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from crossfill.loops import run_until_woken
from crossfill.store.commit_signals import APP_FEE_CLAIMS, PERMIT_DEPOSITS


def _write(*, commit: bool) -> None:
    with Session(create_engine("sqlite://")) as session:
        session.execute(text("select 1"))
        PERMIT_DEPOSITS.mark(session)
        if commit:
            session.commit()
        else:
            session.rollback()


def test_a_commit_wakes_the_kind_it_wrote_only() -> None:
    permits, claims = asyncio.Event(), asyncio.Event()
    PERMIT_DEPOSITS.register(permits)
    APP_FEE_CLAIMS.register(claims)
    try:
        _write(commit=False)
        assert not permits.is_set()
        _write(commit=True)
        assert permits.is_set()
        assert not claims.is_set()
    finally:
        PERMIT_DEPOSITS.unregister(permits)
        APP_FEE_CLAIMS.unregister(claims)


async def test_a_worker_run_until_woken_ticks_when_its_kind_commits() -> None:
    ticks: list[int] = []
    ticked = asyncio.Event()

    async def tick() -> None:
        ticks.append(len(ticks))
        ticked.set()

    # An hour's interval: only the wakeup can bring the second tick.
    task = asyncio.create_task(run_until_woken("woken", tick, PERMIT_DEPOSITS, 3600))
    await asyncio.wait_for(ticked.wait(), 5)
    ticked.clear()
    await asyncio.sleep(0)  # the loop is in its wait
    _write(commit=True)
    await asyncio.wait_for(ticked.wait(), 5)
    assert ticks == [0, 1]
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    _write(commit=True)  # unregistered when the loop ended: nothing left to wake
