"""Transfers into the solver's exchange account, and whether one pays for a withdrawal (pure).

The exchange's ledger (`userNonFundingLedgerUpdates`) lists each transfer with its hash, its
time and a `delta`: `send` (a `sendAsset`: token, amount, source and destination DEX, nonce)
or `internalTransfer` (a `usdSend` of perps USDC: `usdc`, nonce). A transfer carries no
request id, only its signer's nonce; the signer's `NonceMapping` (POST /authorize) names the
request. A transfer pays for it when it is the quoted token, from the quoted DEX, of exactly
the quoted amount (the user signed that amount), before the quote expired, and the request is
not paid yet. Any other incoming transfer is refunded with the verdict as its reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from crossfill.domain.deposit_checks import DepositVerdict

SEND = "send"
INTERNAL_TRANSFER = "internalTransfer"
PERPS_DEX = ""
# The collateral token's name; `usdSend` moves only it, between perps accounts.
COLLATERAL = "USDC"


@dataclass(frozen=True)
class IncomingTransfer:
    """A transfer into the watched account, as the ledger shows it."""

    hash: str
    time_ms: int
    sender: str  # lower-case
    token: str  # the token's name ("USDC"), without its id
    source_dex: str
    destination_dex: str
    amount: str  # as the exchange writes it ("12.5")
    nonce: int

    def units(self, decimals: int) -> int | None:
        """The amount in the smallest unit of a currency of `decimals`; None when it has more
        decimals than that currency (it cannot be what was quoted)."""
        try:
            scaled = Decimal(self.amount).scaleb(decimals)
        except InvalidOperation:
            return None
        if not scaled.is_finite() or scaled != scaled.to_integral_value() or scaled < 0:
            return None
        return int(scaled)


def _text(delta: Mapping[str, object], key: str) -> str | None:
    value = delta.get(key)
    return value if isinstance(value, str) else None


def _nonce(delta: Mapping[str, object]) -> int | None:
    value = delta.get("nonce")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def incoming_transfer(
    account: str, time_ms: int, tx_hash: str, delta: Mapping[str, object]
) -> IncomingTransfer | None:
    """The entry as a transfer into `account`; None for anything else (an outgoing transfer,
    another kind of entry, or one without a nonce to match it by)."""
    kind = delta.get("type")
    user, destination = _text(delta, "user"), _text(delta, "destination")
    nonce = _nonce(delta)
    if user is None or destination is None or nonce is None:
        return None
    if destination.lower() != account.lower() or user.lower() == account.lower():
        return None
    if kind == SEND:
        token, amount = _text(delta, "token"), _text(delta, "amount")
        source_dex = _text(delta, "sourceDex")
        destination_dex = _text(delta, "destinationDex")
        if token is None or amount is None or source_dex is None or destination_dex is None:
            return None
        return IncomingTransfer(
            tx_hash, time_ms, user.lower(), token.partition(":")[0], source_dex,
            destination_dex, amount, nonce,
        )  # fmt: skip
    if kind == INTERNAL_TRANSFER:
        amount = _text(delta, "usdc")
        if amount is None:
            return None
        return IncomingTransfer(
            tx_hash, time_ms, user.lower(), COLLATERAL, PERPS_DEX, PERPS_DEX, amount, nonce
        )
    return None


@dataclass(frozen=True)
class QuotedTransfer:
    """What the request's quote asked the user to sign."""

    token: str  # the token's name, without its id
    source_dex: str
    amount: int
    decimals: int
    expires_at_ms: int
    already_paid: bool


def judge_transfer(transfer: IncomingTransfer, quoted: QuotedTransfer | None) -> DepositVerdict:
    """The first failing rule wins (as `judge_deposit` orders them for the EVM chains)."""
    if quoted is None:
        return DepositVerdict.ORPHANED
    if quoted.already_paid:
        return DepositVerdict.DOUBLE_SPEND
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
