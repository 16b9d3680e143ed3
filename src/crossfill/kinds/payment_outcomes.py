"""What became of a payment a kind's journalled payer made (from the SVM vault, from the
solver's exchange account): one outcome shape for every kind, read alike by its solver and
its refunder.

A payer answers `Paid` once the chain shows the payment final, `Refused` when the chain
refused it for good (a program failed, the exchange said no: only then may an order be
refused or a refund given up), and `Pending` while an attempt may still land. Every other
failure (unreachable, rate-limited, behind) is raised as the `errors.ChainError` it is, for
the caller's loop to retry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeAlias, TypeVar

# What the chain tells of a landed payment (a slot, block time and fee; a ledger's time).
Landed = TypeVar("Landed")
# How an attempt still in flight is known on its chain (a signature; a signer's nonce).
Attempt = TypeVar("Attempt")


@dataclass(frozen=True)
class Paid(Generic[Landed]):
    """The payment landed: `reference` names it on the chain (a signature, a ledger hash);
    `landed` is what the chain tells of it."""

    reference: str
    landed: Landed


@dataclass(frozen=True)
class Refused:
    """The chain refused the payment for good. `reason`: its own words or error value;
    `reference`: the refused attempt, where the chain names one."""

    reason: object
    reference: str | None = None


@dataclass(frozen=True)
class Pending(Generic[Attempt]):
    """An attempt that may still land, as its chain knows it."""

    attempt: Attempt


PaymentOutcome: TypeAlias = Paid[Landed] | Refused | Pending[Attempt]
