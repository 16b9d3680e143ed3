"""In-process wake-ups after a commit: a writer marks its session with the kind of row it
stored, and once that session commits, every asyncio event registered for the kind is set.

Other processes learn the same by polling; a signal only removes the polling delay when the
writer is in the worker's process (the embedded default). A rolled-back session wakes nobody.
"""

from __future__ import annotations

import asyncio

from sqlalchemy import event
from sqlalchemy.orm import Session


class CommitSignal:
    def __init__(self, kind: str) -> None:
        self._mark = f"crossfill.{kind}_written"
        self._waiters: set[asyncio.Event] = set()
        _SIGNALS.append(self)

    def register(self, waiter: asyncio.Event) -> None:
        self._waiters.add(waiter)

    def unregister(self, waiter: asyncio.Event) -> None:
        self._waiters.discard(waiter)

    def mark(self, session: Session) -> None:
        session.info[self._mark] = True

    def marked(self, session: Session) -> bool:
        """Whether the session's transaction has been marked already."""
        return bool(session.info.get(self._mark, False))

    def _committed(self, session: Session) -> None:
        if session.info.pop(self._mark, False):
            for waiter in list(self._waiters):
                waiter.set()

    def _rolled_back(self, session: Session) -> None:
        session.info.pop(self._mark, None)


_SIGNALS: list[CommitSignal] = []


@event.listens_for(Session, "after_commit")
def _committed(session: Session) -> None:
    if session.info:
        for signal in _SIGNALS:
            signal._committed(session)


@event.listens_for(Session, "after_rollback")
def _rolled_back(session: Session) -> None:
    if session.info:
        for signal in _SIGNALS:
            signal._rolled_back(session)


OUTBOX_EVENTS = CommitSignal("outbox")
PERMIT_DEPOSITS = CommitSignal("permit_deposit")
APP_FEE_CLAIMS = CommitSignal("app_fee_claim")
GASLESS_EXECUTIONS = CommitSignal("gasless_execution")
