"""Perps payer: pays from the solver's exchange account, each payment once, crash-safe.

Every transfer is a `sendAsset` (within perps for perps USDC, within the spot DEX for a spot
token) signed under a fresh nonce, journalled (`perps_payments`) and committed before it is
posted. While an attempt may still be taken, only its journalled action is ever posted again:
the exchange takes a signer's nonce once, so re-posting it after a crash or a timeout cannot
credit twice (its answer is then "duplicate nonce", which counts as done once the ledger shows
the credit).
A payment is `credited` only when the exchange's ledger (`userNonFundingLedgerUpdates` of the
solver's account) shows the transfer under the attempt's nonce, with the ledger's hash.

A refusal for any other reason than the nonce is final (a refused action does not use its
nonce, but nothing re-posts it: the attempt is settled `refused`). A refusal for the nonce
itself (outside the window, below the signer's kept nonces) means it can never be taken:
the attempt is `dead` and the next is signed in the same database transaction. Every action
the solver's exchange account signs goes through this journal, so no other action of it can
hold one of these nonces. Transient failures propagate for the caller's loop to retry.

The books move in the transaction that settles an attempt credited: the payment's own entry
(its fill's or refund's, given by the caller), and the fee the exchange's ledger shows it
charged the solver's account, in perps USDC, as gas.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Final

import structlog
from eth_account.signers.local import LocalAccount
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.errors import ActionRefused
from crossfill.kinds.payment_outcomes import Paid, PaymentOutcome, Pending, Refused
from crossfill.kinds.perps.actions import (
    SendAsset,
    SignedAction,
    format_amount,
    parse_action,
    parse_signature,
    sign_action,
)
from crossfill.kinds.perps.client import PerpsPort, Transfer
from crossfill.kinds.perps.config import (
    PERPS_USDC_ADDRESS,
    PERPS_USDC_DECIMALS,
    PerpsExchangeConfig,
)
from crossfill.kinds.perps.payments import PERPS_PAYMENTS, highest_nonce
from crossfill.store import books as ledger
from crossfill.store.books import PaymentBooks
from crossfill.store.payment_journal import IN_FLIGHT, Stage
from crossfill.store.tables import PerpsPayment

log = structlog.get_logger(__name__)
# How far before an attempt's journalling its ledger entry is looked for (clock skew).
LEDGER_LOOKBACK: Final = timedelta(minutes=5)
# Concurrent payers may pick the same next nonce; the unique key lets one win per round.
_SIGN_RETRIES: Final = 20


@dataclass(frozen=True)
class PerpsPaymentOrder:
    """Pay `amount` (smallest units of `currency`, a 1337 address) to `destination`'s
    exchange account, once per (`purpose`, `key`)."""

    purpose: str
    key: str
    destination: str
    currency: str
    amount: int
    decimals: int


@dataclass(frozen=True)
class LedgerTime:
    """When the exchange's ledger shows a transfer (ms since the epoch; 0 when unknown)."""

    ms: int

    @property
    def seconds(self) -> int | None:
        return self.ms // 1000 if self.ms else None


# A payment from the solver's exchange account: credited at the ledger's time, under the
# ledger's hash; in flight as its signer's nonce.
PerpsPaymentOutcome = PaymentOutcome[LedgerTime, int]


def _is_duplicate(message: str) -> bool:
    return "duplicate nonce" in message.lower()


def _is_nonce_refusal(message: str) -> bool:
    return "nonce" in message.lower() and not _is_duplicate(message)


def usdc_units(amount: Decimal) -> int:
    """A USDC amount of the exchange's, in perps USDC's smallest units (exact: the exchange
    counts USD in millionths)."""
    return int((amount * 10**PERPS_USDC_DECIMALS).to_integral_value())


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


@dataclass(eq=False)
class PerpsPayer:
    client: PerpsPort
    config: PerpsExchangeConfig
    account: LocalAccount
    sessions: async_sessionmaker[AsyncSession]
    _: KW_ONLY
    now: Callable[[], datetime]

    def action_for(self, order: PerpsPaymentOrder, nonce: int) -> SendAsset:
        """A `sendAsset` within perps (USDC) or within the token's DEX: its ledger entry
        carries the nonce, which is how the payment is found there."""
        if order.currency == PERPS_USDC_ADDRESS:
            dex, token = "", self.config.usdc_token
        else:
            spot = self.config.spot_currency(order.currency)
            assert spot is not None, "quoted currencies are configured ones"
            dex, token = spot.dex or "spot", spot.wire_token
        return SendAsset(
            self.config.exchange_chain, self.config.signature_chain, order.destination.lower(),
            format_amount(order.amount, order.decimals), source_dex=dex, destination_dex=dex,
            token=token, from_sub_account="", nonce_value=nonce,
        )  # fmt: skip

    async def pay(
        self, order: PerpsPaymentOrder, books: PaymentBooks | None = None
    ) -> PerpsPaymentOutcome:
        """Idempotent: the first call signs, journals and posts; later calls follow the same
        attempt to its outcome (re-posting it, or signing the next only once it is dead).
        `books`: what the payment posts once the ledger shows it credited."""
        async with self.sessions() as session:
            attempt = await PERPS_PAYMENTS.latest(
                session, chain_id=self.config.id, purpose=order.purpose, payment_key=order.key
            )
        if attempt is None:
            return await self._sign_and_post(order, books, number=1, dead=None)
        stage = PERPS_PAYMENTS.stage_of(attempt)
        if stage is Stage.PAID:
            return Paid(attempt.tx_hash or "", LedgerTime(attempt.ledger_time_ms or 0))
        if stage is Stage.REFUSED:
            return Refused(attempt.error or "")
        if stage is Stage.DEAD:
            return await self._sign_and_post(order, books, number=attempt.attempt + 1, dead=None)
        credited = await self._credit_in_ledger(attempt, books)
        if credited is not None:
            return credited
        return await self._post(order, books, attempt)

    async def _post(
        self, order: PerpsPaymentOrder, books: PaymentBooks | None, attempt: PerpsPayment
    ) -> PerpsPaymentOutcome:
        try:
            await self.client.post_action(_signed(attempt))
        except ActionRefused as refused:
            credited = await self._credit_in_ledger(attempt, books)
            if credited is not None:
                return credited
            if _is_duplicate(refused.message):
                # Taken by the exchange; its ledger has not shown it yet.
                return Pending(attempt.nonce)
            if _is_nonce_refusal(refused.message):
                log.info("perps payment nonce refused; re-signing", key=order.key,
                         attempt=attempt.attempt, reason=refused.message)  # fmt: skip
                return await self._sign_and_post(
                    order, books, number=attempt.attempt + 1, dead=attempt
                )
            log.warning("perps payment refused", key=order.key, reason=refused.message)
            await self._settle(attempt, Stage.REFUSED, error=refused.message)
            return Refused(refused.message)
        credited = await self._credit_in_ledger(attempt, books)
        return credited if credited is not None else Pending(attempt.nonce)

    async def _credit_in_ledger(
        self, attempt: PerpsPayment, books: PaymentBooks | None
    ) -> Paid[LedgerTime] | None:
        """The attempt's transfer if the exchange's ledger shows it (settling it credited, and
        posting its books in the same transaction)."""
        start = _ms(attempt.created_at - LEDGER_LOOKBACK)
        for update in await self.client.ledger_updates(attempt.signer, start_ms=start):
            delta = update.delta
            if isinstance(delta, Transfer) and _is_attempt(delta, attempt):
                await self._credited(attempt, update.hash, update.time, delta.fee, books)
                return Paid(update.hash, LedgerTime(update.time))
        return None

    async def _credited(
        self,
        attempt: PerpsPayment,
        tx_hash: str,
        time_ms: int,
        fee: Decimal,
        books: PaymentBooks | None,
    ) -> None:
        now = self.now()
        async with self.sessions() as session, session.begin():
            settled = await PERPS_PAYMENTS.settle(
                session, attempt.id, Stage.PAID, now=now, tx_hash=tx_hash, ledger_time_ms=time_ms
            )
            if not settled:
                return  # another process settled it, and posted its books
            if books is not None:
                await ledger.payment_paid(session, books, now=now)
            await ledger.gas_paid(
                session, self.config.id, sender=attempt.signer, tx_hash=tx_hash,
                fee=usdc_units(fee), now=now, native=PERPS_USDC_ADDRESS,
            )  # fmt: skip

    async def _sign_and_post(
        self,
        order: PerpsPaymentOrder,
        books: PaymentBooks | None,
        *,
        number: int,
        dead: PerpsPayment | None,
    ) -> PerpsPaymentOutcome:
        for _ in range(_SIGN_RETRIES):
            attempt, lost_race = await self._journal(order, number=number, dead=dead)
            if attempt is not None:
                return await self._post(order, books, attempt)
            if lost_race:
                # Another process journalled this attempt first; it posts it, we follow it.
                return await self.pay(order, books)
        raise RuntimeError("perps payment: no free nonce after retries")

    async def _journal(
        self, order: PerpsPaymentOrder, *, number: int, dead: PerpsPayment | None
    ) -> tuple[PerpsPayment | None, bool]:
        """(the journalled attempt, None) or (None, True: another process took this attempt
        number) or (None, False: the nonce was taken meanwhile; sign again)."""
        now = self.now()
        signer = self.account.address
        async with self.sessions() as session:
            highest = await highest_nonce(session, signer=signer)
        nonce = max(_ms(now), highest + 1)
        signed = sign_action(self.action_for(order, nonce), self.account)
        attempt = PerpsPayment(
            chain_id=self.config.id, purpose=order.purpose, payment_key=order.key,
            attempt=number, signer=signer, destination=order.destination.lower(),
            currency=order.currency, amount=str(order.amount), action_type=signed.action.kind,
            nonce=nonce, signed_action=signed.request_body(), status=IN_FLIGHT,
            created_at=now, updated_at=now,
        )  # fmt: skip
        try:
            async with self.sessions() as session, session.begin():
                if not await PERPS_PAYMENTS.journal(session, attempt, replacing=dead, now=now):
                    return None, True
        except IntegrityError:
            async with self.sessions() as session:
                latest = await PERPS_PAYMENTS.latest(
                    session, chain_id=self.config.id, purpose=order.purpose, payment_key=order.key
                )
            return None, latest is not None and latest.attempt >= number
        return attempt, False

    async def _settle(
        self, attempt: PerpsPayment, stage: Stage, *, tx_hash: str | None = None,
        ledger_time_ms: int | None = None, error: str | None = None,
    ) -> None:  # fmt: skip
        async with self.sessions() as session, session.begin():
            await PERPS_PAYMENTS.settle(
                session, attempt.id, stage, now=self.now(), tx_hash=tx_hash,
                ledger_time_ms=ledger_time_ms, error=error,
            )  # fmt: skip


def _signed(attempt: PerpsPayment) -> SignedAction:
    """The journalled action, exactly as it was signed."""
    body = attempt.signed_action
    return SignedAction(parse_action(body["action"]), parse_signature(body["signature"]))


def _is_attempt(transfer: Transfer, attempt: PerpsPayment) -> bool:
    """The ledger's transfer is this attempt's: from its signer under its nonce (one action
    per signer and nonce, so nothing else can match)."""
    return transfer.user.lower() == attempt.signer.lower() and transfer.nonce == attempt.nonce
