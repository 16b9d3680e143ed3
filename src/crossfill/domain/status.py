"""Request statuses and the transitions between them. An illegal transition is a bug."""

from __future__ import annotations

from enum import StrEnum

from crossfill.errors import CrossfillError


class RequestStatus(StrEnum):
    WAITING = "waiting"
    DEPOSITING = "depositing"
    PENDING = "pending"
    SUBMITTED = "submitted"
    SUCCESS = "success"
    FAILURE = "failure"
    REFUND = "refund"


class IllegalTransition(CrossfillError, RuntimeError):
    """Code tried to move a request along an edge the status machine does not have."""


_FORWARD: dict[RequestStatus, frozenset[RequestStatus]] = {
    RequestStatus.WAITING: frozenset(
        {
            RequestStatus.DEPOSITING,
            RequestStatus.PENDING,
            # A same-chain request executes in the user's own transaction.
            RequestStatus.SUCCESS,
            RequestStatus.FAILURE,
            RequestStatus.REFUND,
        }
    ),
    RequestStatus.DEPOSITING: frozenset(
        {
            RequestStatus.PENDING,
            # A standalone gasless call, or a same-chain request, ends with its transaction.
            RequestStatus.SUCCESS,
            RequestStatus.FAILURE,
            RequestStatus.REFUND,
        }
    ),
    RequestStatus.PENDING: frozenset(
        {RequestStatus.SUBMITTED, RequestStatus.FAILURE, RequestStatus.REFUND}
    ),
    RequestStatus.SUBMITTED: frozenset(
        {RequestStatus.SUCCESS, RequestStatus.FAILURE, RequestStatus.REFUND}
    ),
    RequestStatus.FAILURE: frozenset({RequestStatus.REFUND}),
    RequestStatus.SUCCESS: frozenset(),
    RequestStatus.REFUND: frozenset(),
}
# The one way back: a deposit reorged out of the origin chain before anything was filled.
_REORG_ROLLBACK = (RequestStatus.PENDING, RequestStatus.WAITING)

TERMINAL = frozenset({RequestStatus.SUCCESS, RequestStatus.REFUND})
# Waiting for the deposit that pays for it: the statuses a deposit moves on.
AWAITING_DEPOSIT = frozenset({RequestStatus.WAITING, RequestStatus.DEPOSITING})


def can_move(current: RequestStatus, target: RequestStatus, *, reorg: bool = False) -> bool:
    if reorg:
        return (current, target) == _REORG_ROLLBACK
    return target in _FORWARD[current]


def check_transition(current: RequestStatus, target: RequestStatus, *, reorg: bool = False) -> None:
    if not can_move(current, target, reorg=reorg):
        kind = "reorg rollback" if reorg else "transition"
        raise IllegalTransition(f"illegal {kind} {current} -> {target}")
