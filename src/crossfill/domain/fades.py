"""What a fade costs an external solver (docs/solvers.md): a winner that did not fill its order
before its exclusivity ended is cooled down, longer for each fade in a row, and its bond pays
the fallback's extra cost."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

OWED, SENDING, DEBITED, NOTHING, REFUSED = "owed", "sending", "debited", "nothing", "refused"


@dataclass(frozen=True)
class FadePenalty:
    """The cooldown of a first fade (seconds), doubled for each next one in a row, at most
    `max_cooldown_seconds`."""

    cooldown_seconds: int = 60
    max_cooldown_seconds: int = 7 * 86_400

    def cooldown(self, consecutive: int) -> timedelta:
        """The cooldown of the `consecutive`-th fade in a row (1: the first)."""
        doubled = self.cooldown_seconds * 2 ** min(max(consecutive - 1, 0), 40)
        return timedelta(seconds=min(doubled, self.max_cooldown_seconds))

    def cooled_until(
        self, consecutive: int, *, now: datetime, running: datetime | None
    ) -> datetime:
        """Until when the solver is not asked: this fade's cooldown from now, or the one
        already running if it ends later."""
        until = now + self.cooldown(consecutive)
        return until if running is None or running < until else running


def fade_cost(*, paid: int, operator_output: int | None, gas: int, gas_in_output: bool) -> int:
    """What the fallback cost the operator beyond its own price: the output it paid (the bid's)
    above its own output for the same input, and the fill's gas when the output is the gas
    currency (else the gas is not counted: it is another currency than the bond's)."""
    above = max(paid - operator_output, 0) if operator_output is not None else 0
    return above + (gas if gas_in_output else 0)
