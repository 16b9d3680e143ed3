"""What a deposit lost to a reorg after it was confirmed means for its request.

Before confirmation nothing was acted on: the deposit is dropped and the request keeps waiting.
After it, the answer depends on how far the request got.
"""

from __future__ import annotations

from enum import StrEnum

from crossfill.domain.status import RequestStatus

DEPOSIT_REORGED = "DEPOSIT_REORGED"


class ReorgAction(StrEnum):
    # Nothing filled and no solver working on it: back to waiting, as if never deposited.
    ROLL_BACK = "roll_back"
    # A fill was (or may be being) sent, or a refund is due: keep the status, record the reason.
    RECORD = "record"
    # Already refunded: the refund stands on its own; nothing to change on the request.
    NOTHING = "nothing"


def after_confirmation(status: RequestStatus, *, leased: bool) -> ReorgAction:
    if status is RequestStatus.PENDING and not leased:
        return ReorgAction.ROLL_BACK
    if status is RequestStatus.REFUND:
        return ReorgAction.NOTHING
    return ReorgAction.RECORD
