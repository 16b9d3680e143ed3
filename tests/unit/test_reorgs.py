"""What a confirmed deposit lost to a reorg does to its request, for every status."""

from __future__ import annotations

import pytest

from crossfill.domain.reorgs import ReorgAction, after_confirmation
from crossfill.domain.status import RequestStatus, can_move


@pytest.mark.parametrize("leased", [False, True])
@pytest.mark.parametrize("status", list(RequestStatus))
def test_only_an_unleased_pending_request_rolls_back(status: RequestStatus, leased: bool) -> None:
    action = after_confirmation(status, leased=leased)
    if status is RequestStatus.PENDING and not leased:
        assert action is ReorgAction.ROLL_BACK
        assert can_move(status, RequestStatus.WAITING, reorg=True)
    elif status is RequestStatus.REFUND:
        assert action is ReorgAction.NOTHING
    else:
        # A solver may be signing (leased), has sent, or a refund is due: keep the status.
        assert action is ReorgAction.RECORD
