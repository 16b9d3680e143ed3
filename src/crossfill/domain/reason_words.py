"""Why a request failed, or why its deposit was not refunded, in plain words (pure).

Each code a request record can carry (`failReason`, `refundFailReason`) maps to a sentence a
user can act on; a code without one here is still shown, its words made from the code itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

WORDS: Mapping[str, str] = {
    "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL": "The deposit was smaller than the quote asked for, so "
    "it could not be filled; it is refunded.",
    "INCORRECT_DEPOSIT_CURRENCY": "The deposit was made in another currency than the one "
    "quoted; it is refunded in the currency it came in.",
    "DEPOSIT_CHAIN_MISMATCH": "The deposit was made on another chain than the quote's origin; "
    "it is refunded.",
    "ORDER_EXPIRED": "The deposit arrived after the quote had expired; it is refunded.",
    "DOUBLE_SPEND": "The order had already been paid for by another deposit; this one is refunded.",
    "ORPHANED_DEPOSIT_REFUND": "The deposit named an order the service does not know; it is "
    "refunded to its sender.",
    "INCORRECT_PAYMENT": "The payment did not match what the quote asked for; it is refunded.",
    "SOLVER_BALANCE_TOO_LOW": "The service could not pay the output on the destination chain "
    "in time; the deposit is refunded.",
    "SOLVER_CAPACITY_EXCEEDED": "The request was larger than the service can fill now; the "
    "deposit is refunded.",
    "EXECUTION_REVERTED": "The fill on the destination chain would revert, so it was not sent; "
    "the deposit is refunded.",
    "TRANSACTION_REVERTED": "The transaction reverted on chain.",
    "SLIPPAGE": "Prices moved beyond the slippage the quote allowed; the deposit is refunded.",
    "TOO_LITTLE_RECEIVED": "The swap would have delivered less than the minimum quoted; the "
    "deposit is refunded.",
    "SWAP_IMPACT_TOO_HIGH": "The swap's price impact was too high; the deposit is refunded.",
    "DEPOSIT_REORGED": "The deposit's block was dropped from the chain (a reorganisation), so "
    "the deposit no longer exists.",
    "NO_QUOTES": "No quote could be made for the amount sent to the deposit address; it is "
    "refunded.",
    "SPONSOR_BALANCE_TOO_LOW": "The sponsor wallet could not cover the sponsored fees.",
    "AMOUNT_TOO_LOW_TO_REFUND": "The amount is worth less than the gas a refund would cost, "
    "so it is kept rather than refunded.",
    "UNSERVED_CURRENCY": "The deposit was in a currency the service does not serve on that "
    "chain, so it cannot be refunded automatically.",
    "REFUND_REFUSED": "The chain refused the refund payment for good.",
    "DEPOSITED_BEFORE_WATCH_START": "The deposit was made before this service watched the chain, "
    "so it is kept for an operator to look at.",
    "NEGATIVE_NEW_AMOUNT_AFTER_FEES": "Nothing would be left to refund once the fees are paid.",
    "UNKNOWN": "The reason is not known.",
}


@dataclass(frozen=True)
class Reason:
    """A reason code in words: what it explains (`failed`, `not refunded`) and the code."""

    what: str
    code: str

    @property
    def words(self) -> str:
        return WORDS.get(self.code) or self.code.replace("_", " ").capitalize() + "."


def reasons(fail_reason: str | None, refund_fail_reason: str | None) -> list[Reason]:
    """Why a request failed, and why its deposit was not refunded, as far as either applies."""
    said = (("failed", fail_reason), ("not refunded", refund_fail_reason))
    return [Reason(what, code) for what, code in said if code]
