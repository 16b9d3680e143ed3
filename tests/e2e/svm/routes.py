"""What users quote to and from the SVM chain, as the Python client asks it: between it and
the EVM devnet's ORIGIN (deposits to the SVM chain) or DESTINATION (withdrawals from it)."""

from __future__ import annotations

from typing import Any

from solders.keypair import Keypair

from crossfill.kinds.svm.config import SVM_CHAIN_ID
from crossfill_client import QuoteRequest
from tests.e2e.bridging import DESTINATION, NATIVE, ORIGIN

SOL = "1" * 32


def to_svm(
    user: str, recipient: str, currencies: tuple[str, str], amount: int, **more: Any
) -> QuoteRequest:
    """`amount` of `currencies[0]` on ORIGIN for `currencies[1]` paid to `recipient` (base58)
    on the SVM chain."""
    return QuoteRequest(
        user=user, origin_chain_id=ORIGIN, destination_chain_id=SVM_CHAIN_ID,
        origin_currency=currencies[0], destination_currency=currencies[1], amount=amount,
        recipient=recipient, **more,
    )  # fmt: skip


def from_svm(
    user: Keypair,
    recipient: str,
    amount: int,
    currencies: tuple[str, str] = (SOL, NATIVE),
    **more: Any,
) -> QuoteRequest:
    """`amount` of `currencies[0]` (SOL unless told) on the SVM chain for `currencies[1]`
    (ETH unless told) paid to `recipient` on DESTINATION."""
    return QuoteRequest(
        user=str(user.pubkey()), origin_chain_id=SVM_CHAIN_ID, destination_chain_id=DESTINATION,
        origin_currency=currencies[0], destination_currency=currencies[1], amount=amount,
        recipient=recipient, **more,
    )  # fmt: skip
