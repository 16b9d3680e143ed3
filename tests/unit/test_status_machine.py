"""The request status machine: forward edges only, plus the single reorg rollback."""

from __future__ import annotations

import itertools

import pytest

from crossfill.domain.status import (
    TERMINAL,
    IllegalTransition,
    RequestStatus,
    can_move,
    check_transition,
)

S = RequestStatus
HAPPY_PATH = [S.WAITING, S.PENDING, S.SUBMITTED, S.SUCCESS]


def test_happy_path_and_failure_to_refund_are_allowed() -> None:
    for current, target in itertools.pairwise(HAPPY_PATH):
        check_transition(current, target)
    check_transition(S.WAITING, S.DEPOSITING)
    check_transition(S.DEPOSITING, S.PENDING)
    for failing in (S.PENDING, S.SUBMITTED):
        check_transition(failing, S.FAILURE)
    check_transition(S.FAILURE, S.REFUND)
    check_transition(S.WAITING, S.REFUND)  # an invalid deposit is refunded straight away


@pytest.mark.parametrize("terminal", sorted(TERMINAL))
def test_terminal_statuses_never_move(terminal: RequestStatus) -> None:
    for target in RequestStatus:
        assert not can_move(terminal, target)


def test_status_never_moves_backwards_along_the_happy_path() -> None:
    for earlier, later in itertools.combinations(HAPPY_PATH, 2):
        with pytest.raises(IllegalTransition):
            check_transition(later, earlier)


def test_only_a_reorg_takes_pending_back_to_waiting() -> None:
    assert not can_move(S.PENDING, S.WAITING)
    check_transition(S.PENDING, S.WAITING, reorg=True)
    with pytest.raises(IllegalTransition, match="reorg rollback"):
        check_transition(S.SUBMITTED, S.WAITING, reorg=True)
