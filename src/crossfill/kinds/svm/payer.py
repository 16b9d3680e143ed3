"""SVM payer: pays from the solver's vault, each payment once, crash-safe.

Every transaction is signed, journalled (`svm_payments`) and committed before it is sent.
A payment is keyed by purpose and request; its attempts are numbered and unique per key,
so two processes cannot both sign attempt 1. While an attempt may still land it is only
ever re-sent as the same bytes (a validator lands one signature once). It is re-signed with
a fresh blockhash only once it is provably dead: the chain's block height is past the
attempt's last valid block height (no validator will include its blockhash any more) and
its signature has no status. Marking it expired and journalling the next attempt is one
database transaction. So at most one attempt of a payment can ever land.

Only a program's failure (`ProgramFailed`, or a landed attempt with an error) refuses a
payment; every other chain failure propagates for the caller's loop to retry.

The books move in the transaction that settles an attempt that landed: a paid one posts the
payment's own entry (its fill's or refund's, given by the caller) and what it cost the vault
in SOL beyond what it paid (the fee, and the rent of a token account it opened for the
recipient) as gas; one that landed with an error, its cost alone.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from datetime import datetime

import structlog
from solders.keypair import Keypair
from solders.message import Message
from solders.transaction import VersionedTransaction
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.errors import ProgramFailed
from crossfill.kinds.payment_outcomes import Paid, PaymentOutcome, Pending, Refused
from crossfill.kinds.svm.client import BlockhashNotFound, LandedTransaction, SvmPort
from crossfill.kinds.svm.payments import SVM_PAYMENTS
from crossfill.kinds.svm.transactions import SvmPaymentOrder, payment_instructions
from crossfill.store import books as ledger
from crossfill.store.books import PaymentBooks
from crossfill.store.payment_journal import IN_FLIGHT, Stage
from crossfill.store.tables import SvmPayment
from crossfill.types import NATIVE_SVM_ADDRESS

log = structlog.get_logger(__name__)
SETTLED_COMMITMENTS = frozenset({"confirmed", "finalized"})


# A payment from the vault: landed as its transaction tells; in flight as its signature.
SvmPaymentOutcome = PaymentOutcome[LandedTransaction, str]


def vault_cost(order: SvmPaymentOrder, landed: LandedTransaction, *, paid: bool) -> int:
    """What a landed payment cost the vault in SOL beyond what it paid its recipient: its fee,
    and the rent of the token account it opened for the recipient (its fee alone when the
    answer did not show the vault's balances)."""
    if landed.payer_spent is None:
        return landed.fee
    sent = order.amount if paid and order.mint is None else 0
    return landed.payer_spent - sent


@dataclass(eq=False)
class SvmPayer:
    client: SvmPort
    vault: Keypair
    sessions: async_sessionmaker[AsyncSession]
    _: KW_ONLY
    now: Callable[[], datetime]

    async def pay(
        self, order: SvmPaymentOrder, books: PaymentBooks | None = None
    ) -> SvmPaymentOutcome:
        """Idempotent: the first call signs, journals and sends; later calls follow the same
        payment to its outcome (re-sending, or re-signing only after provable expiry).
        `books`: what the payment posts once it is known paid."""
        async with self.sessions() as session:
            attempt = await SVM_PAYMENTS.latest(
                session, chain_id=self.client.chain_id, purpose=order.purpose, payment_key=order.key
            )
        if attempt is None:
            return await self._sign_and_send(order, books, number=1, expired=None)
        return await self._follow(order, books, attempt)

    async def _follow(
        self, order: SvmPaymentOrder, books: PaymentBooks | None, attempt: SvmPayment
    ) -> SvmPaymentOutcome:
        stage = SVM_PAYMENTS.stage_of(attempt)
        if stage is Stage.PAID:
            return await self._paid(attempt.signature)
        if stage is Stage.REFUSED:
            return Refused(attempt.error, attempt.signature)
        if stage is Stage.DEAD:
            # Not left by this payer (expiry and the next attempt are one transaction), but
            # an expired newest attempt means none can land: the next one may be signed.
            return await self._sign_and_send(order, books, number=attempt.attempt + 1, expired=None)
        outcome = await self._status(attempt, order, books)
        if outcome is not None:
            return outcome
        if await self.client.block_height() <= attempt.last_valid_block_height:
            await self._send(attempt, preflight=False)
            return Pending(attempt.signature)
        # Past its last valid block height: it can no longer land, unless it already did and
        # the status read above raced its landing, so read once more before giving it up.
        outcome = await self._status(attempt, order, books)
        if outcome is not None:
            return outcome
        log.info("svm payment expired; re-signing", key=order.key, attempt=attempt.attempt)
        return await self._sign_and_send(order, books, number=attempt.attempt + 1, expired=attempt)

    async def _status(
        self, attempt: SvmPayment, order: SvmPaymentOrder, books: PaymentBooks | None
    ) -> SvmPaymentOutcome | None:
        """The attempt's outcome if the chain has a status for it (Pending until settled)."""
        status = await self.client.signature_status(attempt.signature)
        if status is None:
            return None
        if status.err is not None:
            # Landed with its error: it moved nothing but paid its fee.
            landed = await self.client.landed_transaction(attempt.signature)
            await self._settle(
                attempt, Stage.REFUSED, slot=status.slot, error=status.err,
                booked=_Booked(order, landed, None),
            )  # fmt: skip
            return Refused(status.err, attempt.signature)
        if status.commitment in SETTLED_COMMITMENTS:
            landed = await self.client.landed_transaction(attempt.signature)
            await self._settle(
                attempt, Stage.PAID, slot=status.slot, booked=_Booked(order, landed, books)
            )
            return Paid(attempt.signature, landed)
        return Pending(attempt.signature)

    async def _paid(self, signature: str) -> Paid[LandedTransaction]:
        """The landed payment, read back from the chain."""
        return Paid(signature, await self.client.landed_transaction(signature))

    async def _sign_and_send(
        self,
        order: SvmPaymentOrder,
        books: PaymentBooks | None,
        *,
        number: int,
        expired: SvmPayment | None,
    ) -> SvmPaymentOutcome:
        attempt = await self._journal(order, number=number, expired=expired)
        if attempt is None:
            # Another process journalled this attempt first; it sends it, we follow it.
            return await self.pay(order, books)
        try:
            await self._send(attempt, preflight=True)
        except ProgramFailed as failed:
            # Refused in simulation: nothing was broadcast, so nothing can land.
            await self._settle(attempt, Stage.REFUSED, error=failed.err)
            return Refused(failed.err, attempt.signature)
        return Pending(attempt.signature)

    async def _journal(
        self, order: SvmPaymentOrder, *, number: int, expired: SvmPayment | None
    ) -> SvmPayment | None:
        latest = await self.client.latest_blockhash()
        message = Message.new_with_blockhash(
            payment_instructions(self.vault.pubkey(), order), self.vault.pubkey(), latest.blockhash
        )
        tx = VersionedTransaction(message, [self.vault])
        now = self.now()
        attempt = SvmPayment(
            chain_id=self.client.chain_id,
            purpose=order.purpose,
            payment_key=order.key,
            attempt=number,
            recipient=str(order.recipient),
            currency=order.currency,
            amount=str(order.amount),
            signature=str(tx.signatures[0]),
            raw_transaction=base64.b64encode(bytes(tx)).decode(),
            blockhash=str(latest.blockhash),
            last_valid_block_height=latest.last_valid_block_height,
            status=IN_FLIGHT,
            created_at=now,
            updated_at=now,
        )
        try:
            async with self.sessions() as session, session.begin():
                if not await SVM_PAYMENTS.journal(session, attempt, replacing=expired, now=now):
                    return None
        except IntegrityError:
            return None
        return attempt

    async def _send(self, attempt: SvmPayment, *, preflight: bool) -> None:
        tx = VersionedTransaction.from_bytes(base64.b64decode(attempt.raw_transaction))
        try:
            await self.client.send(tx, preflight=preflight)
        except BlockhashNotFound:
            # Expired or not yet known to this node: block height decides, on a later call.
            log.info("svm payment blockhash not found", signature=attempt.signature)

    async def _settle(
        self,
        attempt: SvmPayment,
        stage: Stage,
        *,
        slot: int | None = None,
        error: object = None,
        booked: _Booked | None = None,
    ) -> None:
        """Settle the attempt; one that landed (`booked`) posts, in the same transaction,
        what it moved and cost, unless another process settled it first."""
        now = self.now()
        async with self.sessions() as session, session.begin():
            settled = await SVM_PAYMENTS.settle(
                session, attempt.id, stage, now=now, slot=slot, error=error
            )
            if not settled or booked is None:
                return
            if booked.books is not None:
                await ledger.payment_paid(session, booked.books, now=now)
            vault = str(self.vault.pubkey())
            await ledger.gas_paid(
                session, self.client.chain_id, sender=vault, tx_hash=attempt.signature,
                fee=vault_cost(booked.order, booked.landed, paid=stage is Stage.PAID),
                now=now, native=NATIVE_SVM_ADDRESS,
            )  # fmt: skip


@dataclass(frozen=True)
class _Booked:
    """A landed attempt's books: its order, its transaction, and the payment's own entry
    (None: it landed with an error and moved nothing, or its caller posts none)."""

    order: SvmPaymentOrder
    landed: LandedTransaction
    books: PaymentBooks | None
