"""Fee sponsorship: which fee components an integrator's sponsor wallet pays, up to a cap.

Components are sponsored in a fixed order (execution, relay, app) until the cap, in the input
currency's units, is used up; the cap is rounded down so a sponsor never pays more than it set.
The user then pays the rest: EXACT_INPUT keeps the input and delivers more, the output trade
types keep the output and take less input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from crossfill.config import Deployment
from crossfill.domain.sponsor_wallet import SponsorWallet as SponsorWallet
from crossfill.errors import BadRequest
from crossfill.kinds.evm.config import evm_chain
from crossfill.quoting.fees import Split, TradeType

# Quote body names; the v3 record calls `relay` `platform`.
COMPONENTS = ("execution", "swap", "relay", "app", "rent")
DEFAULT_COMPONENTS = ("execution", "relay")


@dataclass(frozen=True)
class Component:
    name: str
    selected: bool
    total: int
    sponsored: int

    @property
    def user_pays(self) -> int:
        return self.total - self.sponsored


@dataclass(frozen=True)
class Sponsorship:
    components: tuple[Component, ...]
    cap: int | None  # input units; None when uncapped
    cap_hit: bool
    cap_usd_micros: int | None = None  # the cap as the client gave it

    @property
    def selected(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.components if c.selected)

    @property
    def sponsored(self) -> int:
        return sum(c.sponsored for c in self.components)

    @property
    def total(self) -> int:
        return sum(c.total for c in self.components)


NONE = Sponsorship(components=(), cap=None, cap_hit=False)


def sponsor_wallet(
    deployment: Deployment, address: str, chain_id: int, currency: str
) -> SponsorWallet:
    """A sponsor wallet an operator configures, checked against the deployment."""
    if not re.fullmatch(r"0x[0-9a-fA-F]{40}", address):
        raise BadRequest(f"{address!r} is not an address")
    chain = evm_chain(deployment, chain_id)
    found = chain.currency(currency) if chain else None
    if found is None or found.is_native:
        raise BadRequest(f"{currency} is not an ERC-20 configured on chain {chain_id}")
    return SponsorWallet(address.lower(), chain_id, found.address.lower())


@dataclass(frozen=True)
class SponsorRequest:
    """The body's sponsorship fields, checked; `cap_usd_micros` None means uncapped."""

    components: tuple[str, ...]
    cap_usd_micros: int | None
    wallet: SponsorWallet


def _totals(split: Split) -> dict[str, int]:
    return {
        "execution": split.relayer_gas,
        "swap": 0,  # pool fees are part of the swap's price impact, not a fee we charge
        "relay": split.relayer_service,
        "app": split.app_total,
        "rent": 0,
    }


def sponsor(split: Split, selected: tuple[str, ...], cap: int | None) -> Sponsorship:
    """How much of each selected component the sponsor pays, in order, up to `cap`."""
    remaining = cap
    components = []
    for name, total in _totals(split).items():
        chosen = name in selected
        share = total if chosen else 0
        if remaining is not None:
            share = min(share, remaining)
            remaining -= share
        components.append(Component(name=name, selected=chosen, total=total, sponsored=share))
    cap_hit = any(c.selected and c.sponsored < c.total for c in components)
    return Sponsorship(components=tuple(components), cap=cap, cap_hit=cap_hit)


def apply(split: Split, sponsored: int, trade_type: TradeType) -> Split:
    """The user's side after sponsorship: `amount_in + sponsored` still covers every fee."""
    if sponsored == 0:
        return split
    if trade_type is TradeType.EXACT_INPUT:
        return replace(split, leg_input=split.leg_input + sponsored, sponsored=sponsored)
    return replace(split, amount_in=split.amount_in - sponsored, sponsored=sponsored)
