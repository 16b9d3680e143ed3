"""External solvers as the operator registered them, and which of them a quote may ask for a
bid: its route, its size, its standing (reputation, cooldown) and its bond (docs/solvers.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from crossfill.types import Address


@dataclass(frozen=True)
class SolverRoute:
    """Orders from `origin_chain_id` to `destination_chain_id` whose input and output
    currencies are both among `currencies` (lower-case addresses)."""

    origin_chain_id: int
    destination_chain_id: int
    currencies: frozenset[str]

    def covers(self, ask: Ask) -> bool:
        return (
            self.origin_chain_id == ask.origin_chain_id
            and self.destination_chain_id == ask.destination_chain_id
            and ask.currency_in.lower() in self.currencies
            and ask.currency_out.lower() in self.currencies
        )


@dataclass(frozen=True)
class RegisteredSolver:
    id: int
    name: str
    # Signs its bids, and fills on EVM chains.
    evm_address: Address
    # Its account on each kind of chain ("evm", "svm", ...).
    addresses: dict[str, str]
    bid_url: str
    routes: tuple[SolverRoute, ...]
    max_size_usd_micros: int
    reputation: int
    cooldown_until: datetime | None


@dataclass(frozen=True)
class Ask:
    """What a quote asks solvers to bid on: its route and its notional (the input's USD)."""

    quote_id: str
    origin_chain_id: int
    destination_chain_id: int
    currency_in: str
    currency_out: str
    amount_in: int
    recipient: str
    # Unix seconds: the quote's expiry, which a bid must outlive.
    expiry: int
    notional_usd_micros: int


class Ineligible(StrEnum):
    """Why a registered solver is not asked for a bid."""

    NO_ROUTE = "no_route"
    TOO_LARGE = "too_large"
    COOLING_DOWN = "cooling_down"
    LOW_REPUTATION = "low_reputation"
    BOND_TOO_SMALL = "bond_too_small"


def standing_refusal(
    solver: RegisteredSolver, ask: Ask, *, now: datetime, min_reputation: int
) -> Ineligible | None:
    """Why `solver` may not bid on `ask` whatever its bond (None: it may, bond permitting)."""
    if not any(route.covers(ask) for route in solver.routes):
        return Ineligible.NO_ROUTE
    if ask.notional_usd_micros > solver.max_size_usd_micros:
        return Ineligible.TOO_LARGE
    if solver.cooldown_until is not None and solver.cooldown_until > now:
        return Ineligible.COOLING_DOWN
    if solver.reputation < min_reputation:
        return Ineligible.LOW_REPUTATION
    return None


def bond_covers(
    *, bond_usd_micros: int, outstanding_usd_micros: int, order_usd_micros: int
) -> bool:
    """Whether a bond covers the solver's exclusive orders still open plus this one."""
    return outstanding_usd_micros + order_usd_micros <= bond_usd_micros
