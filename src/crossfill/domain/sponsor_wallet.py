"""An API key's sponsor wallet: who pays a quote's sponsored fees, in which currency, where."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SponsorWallet:
    """An API key's sponsor: pays sponsored fees in `currency` on `chain_id`, pulled by the
    solver with `transferFrom` (the wallet approves the solver)."""

    address: str
    chain_id: int
    currency: str
