"""In-process wake-up: tells waiting dispatchers and tails that outbox events just committed.

`publish` marks its session; after that session commits, every registered asyncio event is
set (`commit_signals.OUTBOX_EVENTS`). Other processes learn the same through polling (and
NOTIFY on PostgreSQL); this only removes the polling delay when the writer is in the same
process (the embedded default).
"""

from __future__ import annotations

from crossfill.store.commit_signals import OUTBOX_EVENTS

register = OUTBOX_EVENTS.register
unregister = OUTBOX_EVENTS.unregister
mark = OUTBOX_EVENTS.mark
marked = OUTBOX_EVENTS.marked
