"""Transfers into the solver's exchange account, and whether one pays for a withdrawal (pure).

The exchange's ledger (`userNonFundingLedgerUpdates`) lists each transfer with its hash, its
time and a `delta`: `send` (a `sendAsset`: token, amount, source and destination DEX, nonce)
or `internalTransfer` (a `usdSend` of perps USDC: `usdc`, nonce). A transfer carries no
request id, only its signer's nonce; the signer's `NonceMapping` (POST /authorize) names the
request. A transfer pays for it when it is the quoted token, from the quoted DEX, of exactly
the quoted amount (the user signed that amount), before the quote expired; whether it is the
one that decides the request (`deposit_checks.judge`) is judged after. Any other incoming
transfer is refunded with the verdict as its reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from crossfill.domain.deposit_checks import DepositVerdict

PERPS_DEX = ""
# `requests.plan.kind` of a withdrawal from the exchange (with the quoted token and DEX).
PLAN_KIND = "perps_withdrawal"


@dataclass(frozen=True)
class IncomingTransfer:
    """A transfer into the watched account, as the ledger shows it."""

    hash: str
    time_ms: int
    sender: str  # lower-case
    token: str  # the token's name ("USDC"), without its id
    source_dex: str
    destination_dex: str
    amount: Decimal  # in whole tokens, as the exchange writes it ("12.5")
    nonce: int

    def units(self, decimals: int) -> int | None:
        """The amount in the smallest unit of a currency of `decimals`; None when it has more
        decimals than that currency (it cannot be what was quoted)."""
        scaled = self.amount.scaleb(decimals)
        if not scaled.is_finite() or scaled != scaled.to_integral_value() or scaled < 0:
            return None
        return int(scaled)


@dataclass(frozen=True)
class QuotedTransfer:
    """What the request's quote asked the user to sign."""

    token: str  # the token's name, without its id
    source_dex: str
    amount: int
    decimals: int
    expires_at_ms: int


def judge_transfer(transfer: IncomingTransfer, quoted: QuotedTransfer | None) -> DepositVerdict:
    """The first failing rule wins (as `judge_deposit` orders them for the EVM chains)."""
    if quoted is None:
        return DepositVerdict.ORPHANED
    if transfer.token != quoted.token.partition(":")[0] or transfer.source_dex != quoted.source_dex:
        return DepositVerdict.WRONG_CURRENCY
    units = transfer.units(quoted.decimals)
    if units is None or units != quoted.amount:
        # Exactly the signed amount, or it is not this request's transfer.
        return (
            DepositVerdict.TOO_LOW
            if units is not None and units < quoted.amount
            else DepositVerdict.WRONG_AMOUNT
        )
    if transfer.time_ms > quoted.expires_at_ms:
        return DepositVerdict.EXPIRED
    return DepositVerdict.ACCEPTED
