"""Exchange sender: posts the solver's signed perps-exchange actions, each once, crash-safe.

Every action is signed and journalled (`exchange_actions`, committed) before it is posted.
An action is keyed by purpose and key (the refund of one incoming transfer); its attempts are
numbered and unique per key, and a signer's nonce is unique, so two processes cannot both sign
attempt 1. While an attempt may still be taken it is only ever re-posted as the same signed
body: the exchange takes a signer's nonce once, so a re-post after a crash (or a lost answer)
can never move the funds twice. The exchange's ledger is the proof an attempt was taken
(an outgoing transfer of the signer under that nonce); a new attempt is signed only once
the previous one's nonce has left the exchange's window without reaching the ledger.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import structlog
from eth_account.signers.local import LocalAccount
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.chains.perps import PerpsPort, Transfer
from crossfill.chains.perps_actions import (
    SignedAction,
    UserAction,
    parse_action,
    parse_signature,
    sign_action,
)
from crossfill.domain.exchange_nonces import still_landable
from crossfill.errors import ActionRefused
from crossfill.store import exchange_actions
from crossfill.store.tables import ExchangeAction

log = structlog.get_logger(__name__)
# How far before its nonce (our clock) the exchange's ledger time of a transfer is looked for.
LEDGER_LOOKBACK_MS = 60_000


@dataclass(frozen=True)
class ExchangeOrder:
    """An action to have taken once: `build` makes it under a given nonce."""

    purpose: str
    key: str
    build: Callable[[int], UserAction]


@dataclass(frozen=True)
class Taken:
    """The exchange's ledger shows the action."""

    ledger_hash: str


@dataclass(frozen=True)
class Waiting:
    """Not taken yet (or not yet seen taken); `reason` says what the exchange last said."""

    reason: str


SendOutcome = Taken | Waiting


def signed_of(row: ExchangeAction) -> SignedAction:
    """The journalled body as the signed action it is (re-posted byte for byte)."""
    return SignedAction(parse_action(row.body["action"]), parse_signature(row.body["signature"]))


class ExchangeSender:
    def __init__(
        self,
        client: PerpsPort,
        account: LocalAccount,
        sessions: async_sessionmaker[AsyncSession],
        *,
        now: Callable[[], datetime],
    ) -> None:
        self.client = client
        self.account = account
        self.sessions = sessions
        self.now = now

    def now_ms(self) -> int:
        return int(self.now().timestamp() * 1000)

    def stage(self, session: AsyncSession, order: ExchangeOrder, *, attempt: int = 1) -> None:
        """Sign the order's action under a fresh nonce and journal it in the caller's
        transaction (so what decided the action and the signed action commit together)."""
        signed = sign_action(order.build(self.now_ms()), self.account)
        now = self.now()
        exchange_actions.record_signed(
            session,
            ExchangeAction(
                chain_id=self.client.chain_id,
                purpose=order.purpose,
                action_key=order.key,
                attempt=attempt,
                signer=self.account.address.lower(),
                nonce=signed.nonce,
                body=signed.request_body(),
                status=exchange_actions.SIGNED,
                created_at=now,
                updated_at=now,
            ),
        )

    async def send(self, order: ExchangeOrder) -> SendOutcome:
        """Idempotent: the first call signs, journals and posts; later calls follow the same
        attempt to the ledger (re-posting it), or sign the next once it is provably dead."""
        async with self.sessions() as session:
            latest = await self._latest(session, order)
        if latest is None or latest.status == exchange_actions.DEAD:
            attempt = 1 if latest is None else latest.attempt + 1
            try:
                async with self.sessions() as session, session.begin():
                    self.stage(session, order, attempt=attempt)
            except IntegrityError:
                return Waiting("another process journalled this action first")
            async with self.sessions() as session:
                latest = await self._latest(session, order)
            assert latest is not None
        if latest.status == exchange_actions.DONE:
            return Taken(latest.ledger_hash or "")
        return await self._post(latest)

    async def _latest(self, session: AsyncSession, order: ExchangeOrder) -> ExchangeAction | None:
        return await exchange_actions.latest(
            session, chain_id=self.client.chain_id, purpose=order.purpose, action_key=order.key
        )

    async def _post(self, row: ExchangeAction) -> SendOutcome:
        refusal: str | None = None
        try:
            await self.client.post_action(signed_of(row))
        except ActionRefused as refused:
            # A refusal may only mean it was taken before (a duplicate nonce): the ledger says.
            refusal = refused.message
        ledger_hash = await self._in_ledger(row)
        if ledger_hash is not None:
            await self._settle(row, exchange_actions.DONE, ledger_hash=ledger_hash)
            log.info("exchange action taken", purpose=row.purpose, key=row.action_key)
            return Taken(ledger_hash)
        if refusal is None:
            return Waiting("taken by the exchange; not in its ledger yet")
        if not still_landable(row.nonce, now_ms=self.now_ms()):
            await self._settle(row, exchange_actions.DEAD)
            return Waiting(f"nonce expired unused ({refusal}); the next attempt is re-signed")
        async with self.sessions() as session, session.begin():
            await exchange_actions.note_error(session, row.id, refusal, now=self.now())
        log.warning("exchange action refused", purpose=row.purpose, key=row.action_key,
                    error=refusal)  # fmt: skip
        return Waiting(refusal)

    async def _in_ledger(self, row: ExchangeAction) -> str | None:
        """The hash of the signer's outgoing transfer under the attempt's nonce, if any."""
        updates = await self.client.ledger_updates(
            self.account.address, start_ms=max(0, row.nonce - LEDGER_LOOKBACK_MS)
        )
        for update in updates:
            delta = update.delta
            if (
                isinstance(delta, Transfer)
                and delta.nonce == row.nonce
                and delta.user.lower() == row.signer
            ):
                return update.hash
        return None

    async def _settle(
        self, row: ExchangeAction, status: str, *, ledger_hash: str | None = None
    ) -> None:
        async with self.sessions() as session, session.begin():
            await exchange_actions.settle(
                session, row.id, status=status, now=self.now(), ledger_hash=ledger_hash
            )
