"""In-process wake-up: tells waiting dispatchers and tails that outbox events just committed.

`publish` marks its session; after that session commits, every registered asyncio event is
set. Other processes learn the same through polling (and NOTIFY on PostgreSQL); this only
removes the polling delay when the writer is in the same process (the embedded default).
"""

from __future__ import annotations

import asyncio

from sqlalchemy import event
from sqlalchemy.orm import Session

MARK = "crossfill.outbox_written"
_waiters: set[asyncio.Event] = set()


def register(waiter: asyncio.Event) -> None:
    _waiters.add(waiter)


def unregister(waiter: asyncio.Event) -> None:
    _waiters.discard(waiter)


def mark(session: Session) -> None:
    session.info[MARK] = True


@event.listens_for(Session, "after_commit")
def _committed(session: Session) -> None:
    if session.info.pop(MARK, False):
        for waiter in list(_waiters):
            waiter.set()


@event.listens_for(Session, "after_rollback")
def _rolled_back(session: Session) -> None:
    session.info.pop(MARK, None)
