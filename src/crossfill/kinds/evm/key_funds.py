"""What one signing key can still pay for on one chain: its gas-currency balance as last read,
less the most that its transactions still in flight may take.

A node refuses a transaction whose sender cannot pay its value and all its gas at its highest
fee, and a nonce whose transaction no node holds keeps every later transaction of the key
waiting. So the transaction manager signs nothing the key cannot pay (`require`), counting
each nonce in flight at the costliest of its versions until it is mined or can never be.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from eth_account.typed_transactions.typed_transaction import TypedTransaction
from hexbytes import HexBytes

from crossfill.errors import InsufficientFunds
from crossfill.store.tables import SentTransaction


def cost(fields: dict[str, Any]) -> int:
    """The most a transaction (its fields as signed) can take from its sender: its value and
    all its gas at its highest fee (what a node checks the sender's balance against)."""
    return int(fields["value"]) + int(fields["gas"]) * int(fields["maxFeePerGas"])


def row_cost(row: SentTransaction) -> int:
    return cost(dict(TypedTransaction.from_bytes(HexBytes(row.raw_transaction)).as_dict()))


class KeyFunds:
    def __init__(self, balance: Callable[[], int | None] | None) -> None:
        """`balance`: the key's gas-currency balance as last read (None while unknown), where
        something reads it; without it, what the key can pay is left to the node."""
        self._balance = balance
        # nonce -> the most its transactions in flight may take (`cost`)
        self._committed: dict[int, int] = {}

    def available(self) -> int | None:
        """What the key may still spend; None while its balance is not known."""
        balance = None if self._balance is None else self._balance()
        return None if balance is None else balance - sum(self._committed.values())

    def require(self, fields: dict[str, Any], who: str) -> None:
        """InsufficientFunds when the key (`who`, for the message) cannot pay for `fields`."""
        available = self.available()
        needed = cost(fields)
        if available is not None and needed > available:
            raise InsufficientFunds(
                f"{who} cannot pay {needed} wei for a transaction ({available} available)",
                shortfall=needed - available,
            )

    def commit(self, nonce: int, amount: int) -> None:
        """A transaction under `nonce` signed (or found in flight) that may take `amount`."""
        self._committed[nonce] = max(amount, self._committed.get(nonce, 0))

    def release(self, nonce: int) -> None:
        """Nothing under `nonce` will take anything more: mined, or never to be."""
        self._committed.pop(nonce, None)
