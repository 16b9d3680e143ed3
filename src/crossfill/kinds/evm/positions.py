"""Users' balance and allowance reads on one chain, kept for the head they were read at.

Quotes for the same user and currency within one block read the same values: the first quote
pays the JSON-RPC round trip, the others reuse its answer until the follower records another
head. A value can therefore be as old as one head poll. The caller decides where that matters
(`read(..., fresh=True)` goes to the node): the quote path re-reads an allowance that would
drop an approval step, so a stale allowance only ever adds an unneeded approval.
"""

from __future__ import annotations

from dataclasses import dataclass

from crossfill.kinds.evm.port import EvmPort
from crossfill.kinds.evm.state import ChainState

# Entries are dropped with every new head; this bounds one head's worth against many users.
MAX_ENTRIES = 20_000


@dataclass(frozen=True)
class Position:
    balance: int
    allowance: int | None  # None for the native currency
    cached: bool  # read at an earlier moment of the current head, not by this call


class UserPositions:
    def __init__(self, client: EvmPort, state: ChainState, *, max_entries: int = MAX_ENTRIES):
        self._client = client
        self._state = state
        self._max_entries = max_entries
        self._head: tuple[int, str] | None = None
        self._entries: dict[tuple[str, str, str], tuple[int, int | None]] = {}

    async def read(
        self, currency: str, holder: str, spender: str, *, fresh: bool = False
    ) -> Position:
        """`holder`'s balance of `currency` and its allowance to `spender`; from this head's
        earlier read unless `fresh`. Raises ChainError as the client does."""
        head = self._state.head
        if head is None:
            balance, allowance = await self._client.balance_and_allowance(currency, holder, spender)
            return Position(balance, allowance, cached=False)
        at = (head.number, head.hash)
        if at != self._head:
            self._head = at
            self._entries = {}
        key = (currency.lower(), holder.lower(), spender.lower())
        if not fresh and (known := self._entries.get(key)) is not None:
            return Position(known[0], known[1], cached=True)
        balance, allowance = await self._client.balance_and_allowance(currency, holder, spender)
        # Kept only if no newer head was recorded meanwhile (that one starts empty).
        if self._head == at:
            if len(self._entries) >= self._max_entries:
                self._entries = {}
            self._entries[key] = (balance, allowance)
        return Position(balance, allowance, cached=False)
