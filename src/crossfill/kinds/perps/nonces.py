"""The perps exchange's nonce rule for signed actions, as the real exchange states it.

A nonce is a millisecond timestamp. It is taken when it lies strictly inside
(now - 2 days, now + 1 day), has never been used by the same signer, and is above the smallest
of the signer's 100 highest nonces once 100 are kept. So a signed action can land at most
once, and an action whose nonce fell out of the window (or under the kept set) can never land.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

PAST_WINDOW_MS: Final = 2 * 24 * 3600 * 1000
FUTURE_WINDOW_MS: Final = 1 * 24 * 3600 * 1000
KEPT_PER_SIGNER: Final = 100

DUPLICATE: Final = "Invalid nonce: duplicate nonce"
TOO_LOW: Final = "Invalid nonce: nonce is below the signer's 100 highest nonces"
OUTSIDE_WINDOW: Final = "Invalid nonce: must be within 2 days before and 1 day after now (ms)"


def in_window(nonce: int, *, now_ms: int) -> bool:
    return now_ms - PAST_WINDOW_MS < nonce < now_ms + FUTURE_WINDOW_MS


def refusal(nonce: int, *, now_ms: int, kept: Collection[int]) -> str | None:
    """Why the exchange refuses `nonce` for a signer whose kept nonces are `kept`; None
    when it takes it."""
    if not in_window(nonce, now_ms=now_ms):
        return OUTSIDE_WINDOW
    if nonce in kept:
        return DUPLICATE
    if len(kept) >= KEPT_PER_SIGNER and nonce <= min(kept):
        return TOO_LOW
    return None


def keep(kept: Collection[int], nonce: int) -> list[int]:
    """The signer's kept nonces once `nonce` is taken: the 100 highest."""
    return sorted({*kept, nonce}, reverse=True)[:KEPT_PER_SIGNER]


def still_landable(nonce: int, *, now_ms: int) -> bool:
    """False once no exchange could take `nonce` any more, whatever the signer did since
    (the window has passed it). A payer may re-sign only after that, or after the exchange
    refused it for good."""
    return nonce > now_ms - PAST_WINDOW_MS
