"""An in-memory perps exchange for worker tests: the devnet exchange's own rules (signatures,
nonces, balances) behind `PerpsPort`, on the test's clock, with scripted faults; checked
against the devnet exchange by `tests/conformance`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Literal

from crossfill.devnet.exchange.actions import Exchange
from crossfill.devnet.exchange.ledger import ExchangeLedger, Leg, Refused
from crossfill.devnet.exchange.tokens import LEDGER_DECIMALS, PERPS_DEX, SPOT_DEX, SPOT_TOKENS, USDC
from crossfill.errors import ActionRefused, ChainUnreachable
from crossfill.kinds.perps.actions import SignedAction
from crossfill.kinds.perps.client import (
    ActionAccepted,
    ClearinghouseState,
    LedgerUpdate,
    SpotBalance,
    SpotTokenMeta,
    delta_of,
)
from crossfill.types import ChainId

# What a post does: reach the exchange and answer; reach it and lose the answer (a timeout
# after the exchange applied it); or never reach it.
OnPost = Literal["answer", "lose_answer", "unreachable"]


class FakeExchange:
    def __init__(self, path: Path, clock: Callable[[], datetime]) -> None:
        self.chain_id = ChainId(1337)
        self.ledger = ExchangeLedger(path)
        self.exchange = Exchange(self.ledger, "Testnet")
        self.clock = clock
        self.on_post: OnPost = "answer"
        self.posted: list[dict[str, object]] = []
        self.ledger_readable = True

    def fund_usd(self, user: str, usd: int) -> None:
        self.ledger.credit(user, Leg(PERPS_DEX, USDC.name, usd * 10**LEDGER_DECIMALS))

    def usd(self, user: str) -> Decimal:
        return _decimal(self.ledger.balance(user, PERPS_DEX, USDC.name))

    async def post_action(self, signed: SignedAction) -> ActionAccepted:
        body = signed.request_body()
        self.posted.append(body)
        if self.on_post == "unreachable":
            raise ChainUnreachable("exchange: ConnectError")
        try:
            self.exchange.post(body, now_ms=int(self.clock().timestamp() * 1000))
        except Refused as refused:
            if self.on_post == "lose_answer":
                raise ChainUnreachable("exchange: ReadTimeout") from None
            raise ActionRefused(str(refused)) from None
        if self.on_post == "lose_answer":
            raise ChainUnreachable("exchange: ReadTimeout")
        return ActionAccepted(signed.nonce)

    async def ledger_updates(
        self, user: str, *, start_ms: int, end_ms: int | None = None
    ) -> list[LedgerUpdate]:
        if not self.ledger_readable:
            return []
        entries = self.ledger.entries(user, start_ms=start_ms, end_ms=end_ms)
        return [LedgerUpdate(e.time, e.hash, delta_of(e.delta)) for e in entries]

    async def clearinghouse_state(self, user: str) -> ClearinghouseState:
        return ClearinghouseState(self.usd(user), self.usd(user))

    async def spot_balances(self, user: str) -> list[SpotBalance]:
        held = self.ledger.balances(user, SPOT_DEX)
        return [
            SpotBalance(token.name, token.index, _decimal(held[token.name]), Decimal(0))
            for token in SPOT_TOKENS
            if held.get(token.name)
        ]

    async def spot_meta(self) -> list[SpotTokenMeta]:
        return [
            SpotTokenMeta(t.name, t.index, t.token_id, t.sz_decimals, t.wei_decimals)
            for t in SPOT_TOKENS
        ]

    async def close(self) -> None:
        self.ledger.close()


def _decimal(units: int) -> Decimal:
    """Ledger units as the amount the exchange shows."""
    return Decimal(units) / 10**LEDGER_DECIMALS
