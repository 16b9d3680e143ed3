"""Repaying the solver: which deposits owed to it go out together, what each is owed, and what
a batch's gas comes to per repaid order. Pure; the repayer (`kinds.evm.repayer`) acts on it.

A deposit is owed to the solver once the order it paid for is filled and the fill is final
(`domain.confirmations.deep_enough` on the destination, by the deposit's value). Owed deposits
of one chain are paid in batches, oldest first: a batch holds at most `size` deposits and is
sent once it is full, once it is worth `min_value_usd_micros`, or once its oldest deposit has
waited `max_age` since its fill; until then it waits for more. A batch holding an `urgent`
deposit (one in a currency the chain is short of: repayment steering, `domain.rebalancing`)
goes at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

# What became of a deposit's repayment (`repayments.state`): its transaction is being sent
# or waits to be mined; it paid the solver; another payout under the deposit's nonce paid the
# deposit first (its refund, or a payout signed earlier and sent by someone else); the
# Depository refused it for another reason (kept for the operator, never sent again).
SENDING = "sending"
REPAID = "repaid"
REFUNDED = "refunded"
PAID_ELSEWHERE = "paid_elsewhere"
REFUSED = "refused"
SETTLED = (REPAID, REFUNDED, PAID_ELSEWHERE, REFUSED)


@dataclass(frozen=True)
class BatchRules:
    """When owed deposits are sent (see the module's docstring)."""

    size: int
    max_age: timedelta
    min_value_usd_micros: int


@dataclass(frozen=True)
class Owed:
    """A deposit owed to the solver: its fill is final."""

    deposit_id: int
    # What it is worth now (None: no price for its currency; it counts for nothing then).
    value_usd_micros: int | None
    # When its fill was mined, as recorded: a batch's age is its oldest deposit's.
    since: datetime
    # Its chain is short of its currency (`domain.rebalancing.steered`): repaid at once.
    urgent: bool = False


def batches_due(owed: Iterable[Owed], rules: BatchRules, *, now: datetime) -> list[list[Owed]]:
    """The batches to send now, oldest deposits first: `owed` cut into batches of
    `rules.size`, each kept when it is full, worth enough or old enough."""
    ordered = sorted(owed, key=lambda entry: (entry.since, entry.deposit_id))
    batches = [ordered[start : start + rules.size] for start in range(0, len(ordered), rules.size)]
    return [batch for batch in batches if _due(batch, rules, now)]


def _due(batch: Sequence[Owed], rules: BatchRules, now: datetime) -> bool:
    worth = sum(entry.value_usd_micros or 0 for entry in batch)
    return (
        any(entry.urgent for entry in batch)
        or len(batch) >= rules.size
        or worth >= rules.min_value_usd_micros
        or now - batch[0].since >= rules.max_age
    )


def owed_amount(deposited: int, app_fee_shares: Iterable[int]) -> int:
    """What the solver is owed of a deposit: all of it but the app fees it carried, which stay
    in the Depository until their recipients claim them (`app.app_fees`)."""
    return deposited - sum(app_fee_shares)


def shares(total: int, parts: int) -> list[int]:
    """`total` split into `parts` integer shares that add up to it (the first takes what does
    not divide evenly): a batch's gas and fee per repaid order."""
    if parts <= 0:
        return []
    each, left = divmod(total, parts)
    return [each + left, *([each] * (parts - 1))]
