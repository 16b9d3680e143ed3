"""Transaction manager: one signing key on one chain.

Every transaction is signed, written to the journal (`sent_transactions`) and committed before
it is broadcast. After a crash the journal says what may be in flight: `rebroadcast()` sends
those again (re-sending a signed transaction is always safe) and nothing is ever signed twice
for the same purpose, so a restart cannot produce a second fill. A transaction may also be
journalled in the caller's own transaction (`journal_in`: a fill in the one that makes its
request pending), then broadcast only once that has committed.

One process signs with a key on a chain at a time (`signer_leases`): a second one started by
mistake, or a frozen one resumed after a replacement started, finds the lease held and sends
nothing (SignerBusy); each journal write checks the lease's fencing token in its own
transaction, and a process that takes the lease over reads the nonce afresh.

A transaction left unmined too long is replaced: the same nonce and call, re-signed with fees
raised by at least 12.5% (what nodes require of a replacement) and never below today's. Only
one transaction per nonce can ever be mined, so a replacement cannot double a fill; whichever
of them lands is the one recorded (`mined_for`).

A nonce may be taken outside the service (an operator moving funds by hand with the key):
whatever was journalled under it can then never be mined. Every sender asks what became of
its latest attempt through one call (`attempt`): mined, still in flight, or nothing to wait
for, which is also the answer once the chain has used that attempt's nonce for a transaction
the journal did not sign, still so `CONFLICT_CONFIRMATION` later (its versions are then
marked `conflicted`, the nonce read afresh, and the sender signs a new attempt).

A transaction the key cannot pay for (its value plus its gas at the offered fee, beyond what
the key's transactions still in flight may take) is never signed (`InsufficientFunds`):
refused by the node, its nonce would hold every later transaction of the key. Should a node
refuse one all the same (a balance read before a transfer out), its nonce is voided at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import groupby
from typing import Any

import structlog
from eth_account.signers.local import LocalAccount
from eth_account.typed_transactions.typed_transaction import TypedTransaction
from eth_utils.address import to_checksum_address
from hexbytes import HexBytes
from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.errors import (
    AlreadyKnown,
    CannotPayGas,
    ChainError,
    InsufficientFunds,
    NonceTooLow,
    SignerBusy,
)
from crossfill.kinds.evm.key_funds import KeyFunds, cost, row_cost
from crossfill.kinds.evm.port import EvmPort
from crossfill.kinds.evm.receipt_outcomes import fee_paid
from crossfill.kinds.evm.signing import TransactionSigner
from crossfill.kinds.evm.state import ChainState
from crossfill.store import books, rebalancing, signer_leases
from crossfill.store.db import as_utc
from crossfill.store.tables import SentTransaction

log = structlog.get_logger(__name__)

# Journal purposes of transfers from one key of the service to another, booked as such when
# mined (`kinds.evm.gas_keeper.purpose_of`: a gas top-up from the solver).
KEY_TRANSFERS = ("gas-top-up:",)
IN_FLIGHT = ("signed", "broadcast")
# A replaced transaction may still be the one that gets mined, so it is still watched.
WATCHED = (*IN_FLIGHT, "replaced")
# Every status of an attempt's versions that `mined_for` and `nonce_taken` look at.
ATTEMPTED = (*WATCHED, "mined", "failed", "dropped", "conflicted")
BUMP_NUMERATOR, BUMP_DENOMINATOR = 9, 8  # +12.5%: above the 10% nodes ask of a replacement
# How long a signer lease lasts without a renewal (`settings.signer_lease_seconds`).
SIGNER_LEASE = timedelta(seconds=3)
# How often a lease held by another process is asked for (`kinds.evm.signer_keeper`): the
# workers of the key are refused without a database read for twice as long after a refusal.
SIGNER_ASKED_EVERY = timedelta(milliseconds=500)
# A nonce seen used by another transaction is believed only when still so this much later: a
# node behind the one that counted nonces may simply not have our receipt yet.
CONFLICT_CONFIRMATION = timedelta(seconds=10)
# Node answers that mean "this exact transaction is already with me": not a failure.
# A journalled transaction no node has acknowledged (its broadcast failed, or the answer was
# lost) is sent again, the same bytes, once it is this old; while the node keeps failing, the
# wait doubles up to `RESEND_AT_MOST`.
RESEND_FIRST_AFTER = timedelta(seconds=2)
RESEND_AT_MOST = timedelta(seconds=30)
# A void: a transfer of nothing from the signer to itself, sent to use a nonce whose
# transaction must not run again (`void`). Its journal rows carry this purpose.
VOID = "void"
VOID_GAS = 21_000


@dataclass(frozen=True)
class Call:
    """What a transaction does, before a nonce and fees make it one."""

    to: str
    data: bytes
    value: int
    gas_limit: int
    authorization_list: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Outgoing:
    """A call to sign and send as one of a batch (`TxManager.send_batch`), and what for."""

    call: Call
    purpose: str
    request_id: str | None


@dataclass(frozen=True)
class Replacement:
    replaced: SentTransaction
    replacement: SentTransaction


@dataclass(frozen=True)
class Mined:
    """The latest attempt for a purpose was mined: the version that was, with its receipt."""

    row: SentTransaction
    receipt: dict[str, Any]

    @property
    def succeeded(self) -> bool:
        return int(self.receipt["status"]) == 1


@dataclass(frozen=True)
class InFlight:
    """The latest attempt for a purpose waits to be mined (its newest journal row)."""

    row: SentTransaction


# What became of a purpose's latest attempt; None: nothing to wait for (see `attempt`).
Attempt = Mined | InFlight | None


def _bumped(old: int, floor: int) -> int:
    return max(-(-old * BUMP_NUMERATOR // BUMP_DENOMINATOR) + 1, floor)


@dataclass(frozen=True)
class MinedAttempt:
    """An attempt's version found mined, its receipt, and every version of the attempt."""

    row: SentTransaction
    receipt: dict[str, Any]
    versions: list[SentTransaction]


class TxManager:
    def __init__(
        self,
        client: EvmPort,
        state: ChainState,
        account: LocalAccount,
        sessions: async_sessionmaker[AsyncSession],
        *,
        now: Callable[[], datetime],
        holder: str,
        lease: timedelta = SIGNER_LEASE,
        funds: Callable[[], int | None] | None = None,
    ) -> None:
        """`funds`: the key's gas-currency balance as last read (None while unknown), where
        something reads it (the followers read the solver key's); see `kinds.evm.key_funds`."""
        self.client = client
        self.state = state
        self.account = account
        self.signer = TransactionSigner(account)
        self.sender = account.address.lower()
        self.sessions = sessions
        self.now = now
        self.holder = holder
        self.lease = lease
        self.funds = KeyFunds(funds)
        self._lock = asyncio.Lock()
        self._next_nonce: int | None = None
        self._token: int | None = None
        self._held_until: datetime | None = None
        # No claim on the lease made yet since this process started (`LeaseClaim.restarting`).
        self._restarting = True
        # Until when the lease is known held by another (a refused claim): the workers' ticks
        # are refused without asking the database; `keep_signer` asks.
        self._busy_until: datetime | None = None
        # nonce -> when it was first seen used while no version journalled under it was mined
        self._suspected: dict[int, datetime] = {}
        # the nonce of a `journal_in` row whose transaction has not committed yet
        self._journalling: int | None = None
        # journal row id -> when to send it again, and the wait after that attempt
        self._resends: dict[int, tuple[datetime, timedelta]] = {}

    async def hold_signer(self) -> int:
        """The lease's fencing token; SignerBusy unless this process holds (or now takes) the
        key's lease on this chain: workers check it before they claim work that needs signing.
        Refused again without a database read while a refusal is recent (`keep_signer` polls)."""
        busy_until = self._busy_until
        if self._token is None and busy_until is not None and self.now() < busy_until:
            raise self._busy()
        return await self._hold_signer()

    async def keep_signer(self) -> int:
        """Renew the lease now if this process holds it, else take it if it is free: the
        fencing token, or SignerBusy (see `kinds.evm.signer_keeper`)."""
        return await self._hold_signer(renew=True)

    @property
    def signer_token(self) -> int | None:
        """The lease's fencing token as last taken or renewed; None while not held."""
        return self._token

    def holds_signer(self) -> bool:
        """Whether this process holds the key's lease with more than half its time left, as
        last taken or renewed (no database read): work may be claimed for signing then; each
        journal write still checks the lease in its own transaction."""
        held_until = self._held_until
        return (
            self._token is not None
            and held_until is not None
            and held_until - self.now() > self.lease / 2
        )

    async def _hold_signer(self, *, renew: bool = False) -> int:
        """The signer lease's fencing token, taken if free; SignerBusy if another holds it.
        A new token means another process may have signed meanwhile: the nonce is read again.
        Unless `renew`, a lease with more than half its time left is not renewed (journal
        writes and `keep_signer` renew it)."""
        now = self.now()
        held_until = self._held_until
        if (
            not renew
            and self._token is not None
            and held_until is not None
            and held_until - now > self.lease / 2
        ):
            return self._token
        claim = self._claim
        async with self.sessions() as session, session.begin():
            token = await signer_leases.take(session, claim, now=now)
        self._restarting = False
        if token is None:
            self._token = self._held_until = None
            self._busy_until = now + 2 * SIGNER_ASKED_EVERY
            raise self._busy()
        if token != self._token:
            self._token, self._next_nonce = token, None
        self._held_until, self._busy_until = now + self.lease, None
        return token

    def _busy(self) -> SignerBusy:
        return SignerBusy(f"chain {self.client.chain_id}: another process signs for {self.sender}")

    async def _journal(self, session: AsyncSession, token: int) -> None:
        """Fence a journal write (in its transaction): the lease must still be ours."""
        if not await self._fenced(session, token):
            raise SignerBusy(f"chain {self.client.chain_id}: the lease of {self.sender} was lost")

    async def _fenced(self, session: AsyncSession, token: int) -> bool:
        """Renew the lease in the journal write's transaction; False (and forgotten) when it
        is not ours under `token` any more: nothing may be journalled then."""
        now = self.now()
        still_ours = await signer_leases.renew(session, self._claim, token=token, now=now)
        self._held_until = now + self.lease
        if not still_ours:
            self._token = self._next_nonce = self._held_until = None
        return still_ours

    async def _journal_next_nonce(self, session: AsyncSession) -> int | None:
        highest = await session.scalar(
            select(func.max(SentTransaction.nonce)).where(
                *self._own(),
            )
        )
        return None if highest is None else int(highest) + 1

    async def _nonce(self, session: AsyncSession | None = None) -> int:
        """The next nonce, read (once, then counted here) from the chain and the journal, in
        `session` when given (the caller's open transaction)."""
        if self._next_nonce is None:
            on_chain = await self.client.pending_nonce(self.sender)
            if session is None:
                async with self.sessions() as own:
                    journal = await self._journal_next_nonce(own)
            else:
                journal = await self._journal_next_nonce(session)
            self._next_nonce = max(on_chain, journal or 0)
        return self._next_nonce

    def _own(self) -> tuple[ColumnElement[bool], ColumnElement[bool]]:
        """Conditions on journal rows: this key's, on this chain."""
        return (
            SentTransaction.chain_id == self.client.chain_id,
            SentTransaction.sender == self.sender,
        )

    def _fees(self) -> tuple[int, int]:
        return self.state.offered_fees()

    async def send(
        self,
        *,
        to: str,
        data: bytes,
        value: int,
        gas_limit: int,
        purpose: str,
        request_id: str | None,
        authorization_list: Sequence[dict[str, Any]] = (),
    ) -> SentTransaction:
        """Sign, journal (committed), then broadcast. Raises ChainError if the node refuses.

        `(request_id, purpose)` names what the transaction is for; work that is no request's
        (an app-fee claim's payout) passes None and a purpose unique to it. With an
        `authorization_list` (EIP-7702 entries as eth-account signs them) the transaction is a
        set-code one (type 4); its replacements carry the same list."""
        async with self._lock:
            token = await self._hold_signer()
            nonce = await self._nonce()
            call = Call(to, data, value, gas_limit, tuple(authorization_list))
            fields = self._fields(call, nonce)
            self.funds.require(fields, self._who())
            row = self._signed_row(fields, purpose=purpose, request_id=request_id)
            async with self.sessions() as session, session.begin():
                await self._journal(session, token)
                session.add(row)
            self._next_nonce = nonce + 1
            self.funds.commit(nonce, cost(fields))
            await self._first_broadcast(row)
            return row

    async def send_batch(self, batch: Sequence[Outgoing]) -> list[SentTransaction | ChainError]:
        """`send` for many calls at once: each signed under the next nonce (pipelined), all
        journalled in one transaction (fenced, committed), then broadcast together. Per call,
        in order: its journal row, or why it is not in flight: `InsufficientFunds` (not signed,
        no nonce taken) or the node's refusal of its broadcast (journalled: sent again like
        any `send` whose broadcast failed). SignerBusy or a database error: nothing journalled."""
        async with self._lock:
            token = await self._hold_signer()
            nonce = await self._nonce()
            short: dict[int, ChainError] = {}
            signing: list[tuple[int, dict[str, Any], Outgoing]] = []
            for index, item in enumerate(batch):
                fields = self._fields(item.call, nonce)
                try:
                    self.funds.require(fields, self._who())
                except InsufficientFunds as exc:
                    short[index] = exc
                    continue
                self.funds.commit(nonce, cost(fields))
                signing.append((index, fields, item))
                nonce += 1
            rows = await self._signed_rows(signing)
            try:
                async with self.sessions() as session, session.begin():
                    await self._journal(session, token)
                    session.add_all(rows)
            except BaseException:
                for row in rows:
                    self.funds.release(row.nonce)
                raise
            self._next_nonce = nonce
            refused = await self._first_broadcasts(rows)
            outcomes: dict[int, SentTransaction | ChainError] = dict(short)
            for (index, _fields, _item), row in zip(signing, rows, strict=True):
                outcomes[index] = refused.get(row.id, row)
            return [outcomes[index] for index in range(len(batch))]

    async def _signed_rows(
        self, signing: Sequence[tuple[int, dict[str, Any], Outgoing]]
    ) -> list[SentTransaction]:
        """The journal rows of a batch's signed transactions. Signing is CPU work (about a
        millisecond a transaction): done off the event loop, which keeps serving meanwhile."""
        return await asyncio.to_thread(
            lambda: [
                self._signed_row(fields, purpose=item.purpose, request_id=item.request_id)
                for _index, fields, item in signing
            ]
        )

    async def _first_broadcasts(self, rows: Sequence[SentTransaction]) -> dict[int, ChainError]:
        """`_first_broadcast` of a batch just journalled, sent together: the refusals, by row
        id (a node that has one already, or a nonce taken, is none); the rest acknowledged in
        one database transaction."""
        if not rows:
            return {}
        try:
            answers = await self.client.send_raw_batch(
                [bytes.fromhex(row.raw_transaction[2:]) for row in rows]
            )
        except ChainError as unreachable:
            answers = [unreachable] * len(rows)
        refused: dict[int, ChainError] = {}
        for row, answer in zip(rows, answers, strict=True):
            if isinstance(answer, ChainError) and not self._sent_anyway(row, answer, fresh=True):
                refused[row.id] = answer
        for row in rows:
            failure = refused.get(row.id)
            if isinstance(failure, CannotPayGas):
                await self._voided_for_funds(row, failure)
        await self._acknowledged(*(row.id for row in rows if row.id not in refused))
        return refused

    def available(self) -> int | None:
        """What the key may still spend in gas currency (see `kinds.evm.key_funds`)."""
        return self.funds.available()

    def cost_of(self, call: Call) -> int:
        """The most `call` would take from the key if signed now (value and gas at the
        offered fee)."""
        return cost(self._fields(call, 0))

    @property
    def _claim(self) -> signer_leases.LeaseClaim:
        """This process's claim on the key's signer lease."""
        return signer_leases.LeaseClaim(
            self.client.chain_id,
            self.sender,
            holder=self.holder,
            lease=self.lease,
            restarting=self._restarting,
        )

    def _who(self) -> str:
        return f"chain {self.client.chain_id}: {self.sender}"

    def _described(self, row: SentTransaction) -> dict[str, object]:
        """A journalled transaction as the logs name it."""
        return {
            "chain_id": self.client.chain_id,
            "nonce": row.nonce,
            "tx_hash": row.tx_hash,
            "purpose": row.purpose,
        }

    def _signed_again(self, fields: dict[str, Any], event: str, **logged: object) -> None:
        """A nonce signed again (a replacement, a void), journalled: its cost counted against
        the key's funds, and said."""
        nonce = fields["nonce"]
        self.funds.commit(nonce, cost(fields))
        log.warning(event, chain_id=self.client.chain_id, nonce=nonce, **logged)

    async def _first_broadcast(self, row: SentTransaction) -> None:
        """Broadcast a transaction just signed. Refused for want of funds, its nonce is voided
        at once (so the transactions after it are not held), and ChainError raised."""
        try:
            await self._broadcast(row, fresh=True)
        except CannotPayGas as exc:
            await self._voided_for_funds(row, exc)
            raise

    async def _voided_for_funds(self, row: SentTransaction, refusal: CannotPayGas) -> None:
        """A node refused a transaction just signed for want of funds: its nonce voided."""
        log.error(
            "a node refused a transaction for want of funds: its nonce voided",
            **self._described(row),
            error=str(refusal),
        )
        try:
            await self._void(row, await self._hold_signer())
        except (ChainError, SignerBusy) as void_failed:  # journalled: sent again until mined
            log.warning("void not sent", nonce=row.nonce, error=str(void_failed))

    def may_journal_in(self) -> bool:
        """Whether `journal_in` may sign now, as far as this process knows (no database read):
        the lease held and no other send under way."""
        return not self._lock.locked() and self.holds_signer()

    async def journal_in(
        self, session: AsyncSession, call: Call, *, purpose: str, request_id: str | None
    ) -> SentTransaction | None:
        """Sign and journal in the caller's open transaction, waiting on nothing: None, with
        nothing written, unless this process holds the lease (as last known, and still so
        under its fencing token in that transaction) and no other send is under way (the
        nonce, when not counted yet, is read in that transaction). Otherwise the key stays
        this transaction's until `journalled_committed` (broadcast it then: it is durable) or
        `journalled_dropped` (it did not commit)."""
        token = self._token
        if self._lock.locked() or not self.holds_signer() or token is None:
            return None
        await self._lock.acquire()  # free: taken without waiting
        journalled = False
        try:
            nonce = await self._nonce(session)
            fields = self._fields(call, nonce)
            self.funds.require(fields, self._who())
            row = self._signed_row(fields, purpose=purpose, request_id=request_id)
            if not await self._fenced(session, token):
                return None
            session.add(row)
            self.funds.commit(nonce, cost(fields))
            self._journalling = nonce
            journalled = True
            return row
        except ChainError:
            # The nonce not read, or the key short of funds: left to `send`, the caller's
            # transaction unharmed.
            return None
        finally:
            if not journalled:
                self._lock.release()

    async def journalled_committed(self, row: SentTransaction) -> None:
        """The transaction holding `row` (from `journal_in`) committed: its nonce is used;
        broadcast it. Raises ChainError if the node refuses (it stays journalled)."""
        try:
            self._journalling = None
            self._next_nonce = row.nonce + 1
            await self._first_broadcast(row)
        finally:
            self._lock.release()

    def journalled_dropped(self) -> None:
        """The transaction holding a `journal_in` row did not commit (or may not have, if it
        failed in its commit): the nonce is read again before the next signature."""
        if self._journalling is not None:
            self.funds.release(self._journalling)
            self._journalling = None
        self._next_nonce = None
        self._lock.release()

    def _fields(self, call: Call, nonce: int) -> dict[str, Any]:
        max_fee, tip = self._fees()
        fields: dict[str, Any] = {
            "type": 4 if call.authorization_list else 2,
            "chainId": self.client.chain_id,
            "nonce": nonce,
            "to": to_checksum_address(call.to),
            "data": call.data,
            "value": call.value,
            "gas": call.gas_limit,
            "maxFeePerGas": max_fee,
            "maxPriorityFeePerGas": tip,
        }
        if call.authorization_list:
            fields["authorizationList"] = list(call.authorization_list)
        return fields

    def _signed_row(
        self, fields: dict[str, Any], *, purpose: str, request_id: str | None
    ) -> SentTransaction:
        signed = self.signer.sign(fields)
        now = self.now()
        return SentTransaction(
            chain_id=self.client.chain_id,
            sender=self.sender,
            nonce=fields["nonce"],
            purpose=purpose,
            request_id=request_id,
            tx_hash=signed.hash.to_0x_hex(),
            raw_transaction=signed.raw_transaction.to_0x_hex(),
            max_fee_per_gas=str(fields["maxFeePerGas"]),
            max_priority_fee_per_gas=str(fields["maxPriorityFeePerGas"]),
            status="signed",
            created_at=now,
            updated_at=now,
        )

    async def replace_stuck(self, older_than: timedelta) -> list[Replacement]:
        """Send again what no node has acknowledged yet (`resend_unacknowledged`); re-sign,
        with higher fees, every in-flight transaction unmined for `older_than`."""
        in_flight = await self.in_flight()
        await self.resend_unacknowledged(in_flight)
        cutoff = self.now() - older_than
        stale = [row for row in in_flight if as_utc(row.created_at) < cutoff]
        if not stale:
            return []
        mined_up_to = await self.client.mined_nonce(self.sender)
        replacements = []
        async with self._lock:
            token = await self._hold_signer()
            for row in stale:
                if row.nonce < mined_up_to:
                    continue  # its nonce is used: this or a sibling is mined, tracking settles it
                replacements.append(await self._replace(row, token))
        return replacements

    async def _replace(self, row: SentTransaction, token: int) -> Replacement:
        fields = dict(TypedTransaction.from_bytes(HexBytes(row.raw_transaction)).as_dict())
        for signature_part in ("v", "r", "s"):
            fields.pop(signature_part)
        self._outbid(fields, row)
        fields["to"] = to_checksum_address(fields["to"])
        replacement = self._signed_row(fields, purpose=row.purpose, request_id=row.request_id)
        async with self.sessions() as session, session.begin():
            await self._journal(session, token)
            replaced = await session.get(SentTransaction, row.id)
            assert replaced is not None
            replaced.status = "replaced"
            replaced.updated_at = self.now()
            session.add(replacement)
        self._signed_again(
            fields,
            "stuck transaction replaced",
            replaced=row.tx_hash,
            replacement=replacement.tx_hash,
            max_fee_per_gas=fields["maxFeePerGas"],
        )
        try:
            await self._broadcast(replacement)
        except ChainError as exc:
            # Journalled: rebroadcast or the next replacement round tries it again.
            log.warning("replacement broadcast failed", tx_hash=replacement.tx_hash, error=str(exc))
        return Replacement(row, replacement)

    def _outbid(self, fields: dict[str, Any], row: SentTransaction) -> None:
        """`fields`' fees set to replace `row` (the same nonce) in a node's pool: raised by
        at least 12.5% over its fees, and never below today's."""
        max_fee, tip = self._fees()
        fields["maxPriorityFeePerGas"] = _bumped(int(row.max_priority_fee_per_gas), tip)
        fields["maxFeePerGas"] = max(
            _bumped(int(row.max_fee_per_gas), max_fee), fields["maxPriorityFeePerGas"]
        )

    async def void(self, gone: SentTransaction) -> SentTransaction | None:
        """Use `gone`'s nonce with a void (a transfer of nothing to the signer itself), fees
        raised as a replacement's over `gone`'s so that it also displaces `gone` from a pool
        still holding it: journalled, then broadcast. For a transaction that left the chain
        and must not run again (one that reverted: its revert was acted on). None, with
        nothing signed, when a void for that nonce was signed already (see `settle_voids`).
        Raises ChainError if the node refuses it (it stays journalled)."""
        async with self._lock:
            return await self._void(gone, await self._hold_signer())

    async def _void(self, gone: SentTransaction, token: int) -> SentTransaction | None:
        """`void`, the key's lock held."""
        async with self.sessions() as session, session.begin():
            if await self._void_versions(session, gone.nonce):
                return None
            await self._journal(session, token)
            fields = self._fields(Call(self.sender, b"", 0, VOID_GAS), gone.nonce)
            self._outbid(fields, gone)
            row = self._signed_row(fields, purpose=VOID, request_id=gone.request_id)
            session.add(row)
        self._signed_again(fields, "nonce voided", voided=gone.tx_hash, void=row.tx_hash)
        await self._broadcast(row)
        return row

    async def _void_versions(self, session: AsyncSession, nonce: int) -> list[SentTransaction]:
        """The voids signed for `nonce` (an original and its replacements), dropped ones
        aside."""
        rows = await session.scalars(
            select(SentTransaction).where(
                *self._own(),
                SentTransaction.nonce == nonce,
                SentTransaction.purpose == VOID,
                SentTransaction.status != "dropped",
            )
        )
        return list(rows)

    async def settle_voids(self) -> list[SentTransaction]:
        """Each void not yet seen mined, looked for on chain (a void's version mined is
        recorded as `mined_for` records a transaction's); the newest version of each void
        still unmined, in nonce order."""
        async with self.sessions() as session:
            rows = await session.scalars(
                select(SentTransaction)
                .where(
                    *self._own(),
                    SentTransaction.purpose == VOID,
                    SentTransaction.status.in_(WATCHED),
                )
                .order_by(SentTransaction.nonce, SentTransaction.id)
            )
            in_flight = list(rows)
        waiting = []
        for _nonce, versions in groupby(in_flight, key=lambda row: row.nonce):
            same_nonce = list(versions)
            if await self._mined_version(same_nonce) is None:
                waiting.append(same_nonce[-1])
        return waiting

    async def voided(self, nonce: int) -> SentTransaction | None:
        """The transaction that a void of `nonce` is to displace: the one recorded as mined
        with that nonce (reverted, unless it was mined again since and succeeded)."""
        async with self.sessions() as session:
            return await session.scalar(
                select(SentTransaction).where(
                    *self._own(),
                    SentTransaction.nonce == nonce,
                    SentTransaction.purpose != VOID,
                    SentTransaction.status.in_(("mined", "failed")),
                )
            )

    async def drop_voids(self, nonce: int) -> None:
        """The voids of `nonce` will never be mined: the transaction they were to displace
        was mined after all (`mined_watch` records it)."""
        async with self.sessions() as session, session.begin():
            for row in await self._void_versions(session, nonce):
                if row.status in WATCHED:
                    row.status = "dropped"
                    row.updated_at = self.now()

    async def _broadcast(self, row: SentTransaction, *, fresh: bool = False) -> None:
        """Send the row's signed bytes; ChainError unless the node took them (`_sent_anyway`)."""
        try:
            await self.client.send_raw(bytes.fromhex(row.raw_transaction[2:]))
        except ChainError as exc:
            if not self._sent_anyway(row, exc, fresh=fresh):
                raise
        await self._acknowledged(row.id)

    def _sent_anyway(self, row: SentTransaction, refusal: ChainError, *, fresh: bool) -> bool:
        """Whether a refused broadcast of `row` is no failure. A node that has it already is
        none; nor is "nonce too low", which a transaction sent before may get once mined: for
        one just signed (`fresh`) it says instead that another transaction took the nonce, so
        the count is read again (`attempt` finds the row's nonce taken and a new one is
        signed). Any other refusal: the count is read again (the node may disagree with it)."""
        if isinstance(refusal, AlreadyKnown):
            return True
        if isinstance(refusal, NonceTooLow):
            if fresh:
                self._next_nonce = None
                log.warning(
                    "a nonce of ours was used by a transaction the journal did not sign",
                    **self._described(row),
                )
            return True
        self._next_nonce = None
        return False

    async def _acknowledged(self, *row_ids: int) -> None:
        """A node has the transactions: `signed` becomes `broadcast`. A later status (mined,
        replaced...) stays: a resend may answer after the tracker has moved on."""
        if not row_ids:
            return
        async with self.sessions() as session, session.begin():
            await session.execute(
                update(SentTransaction)
                .where(SentTransaction.id.in_(row_ids), SentTransaction.status == "signed")
                .values(status="broadcast", updated_at=self.now())
            )

    async def _set_status(
        self,
        row_id: int,
        status: str,
        block_number: int | None = None,
        block_hash: str | None = None,
        *,
        fee: int | None = None,
    ) -> None:
        """`fee`: what the mined transaction cost its sender (its receipt's), booked with it,
        and what it paid another key of the service if it is such a transfer and succeeded."""
        async with self.sessions() as session, session.begin():
            row = await session.get(SentTransaction, row_id)
            assert row is not None
            nonce = row.nonce
            await self._status_in(session, row, status, block_number, block_hash, fee=fee)
        if status not in WATCHED:
            self.funds.release(nonce)  # mined, or never to be: it takes nothing more

    async def _status_in(
        self,
        session: AsyncSession,
        row: SentTransaction,
        status: str,
        block_number: int | None = None,
        block_hash: str | None = None,
        *,
        fee: int | None = None,
    ) -> None:
        """`_set_status` of a row read in the caller's transaction, written there."""
        row.status = status
        row.block_number = block_number
        row.block_hash = block_hash
        row.updated_at = self.now()
        if fee is not None:
            await books.gas_paid(
                session, row.chain_id, sender=row.sender, tx_hash=row.tx_hash, fee=fee,
                now=row.updated_at,
            )  # fmt: skip
            if status == "mined":
                await rebalancing.step_mined(session, row.purpose, row.sender, now=row.updated_at)
            if status == "mined" and row.purpose.startswith(KEY_TRANSFERS):
                sent = TypedTransaction.from_bytes(HexBytes(row.raw_transaction)).as_dict()
                await books.key_transfer(
                    session, row.chain_id, sender=row.sender, recipient=str(sent["to"]),
                    tx_hash=row.tx_hash, amount=int(sent["value"]), now=row.updated_at,
                )  # fmt: skip

    async def in_flight(self) -> list[SentTransaction]:
        async with self.sessions() as session:
            rows = await session.scalars(
                select(SentTransaction).where(
                    *self._own(),
                    SentTransaction.status.in_(IN_FLIGHT),
                )
            )
            return list(rows)

    async def resend_unacknowledged(self, in_flight: Sequence[SentTransaction]) -> None:
        """Broadcast again, the same signed bytes (always safe), each of `in_flight` that no
        node has acknowledged: a broadcast that met a 5xx, a dropped connection or a lost
        answer is retried within seconds, not left to the stuck-transaction replacement; with
        a backoff per transaction while the node keeps failing."""
        now = self.now()
        waiting = [row for row in in_flight if row.status == "signed"]
        resends = {row.id: self._resends[row.id] for row in waiting if row.id in self._resends}
        self._resends = resends
        for row in waiting:
            due, wait = resends.get(
                row.id, (as_utc(row.created_at) + RESEND_FIRST_AFTER, RESEND_FIRST_AFTER)
            )
            if now < due:
                continue
            try:
                await self._broadcast(row)
            except ChainError as exc:
                resends[row.id] = (now + wait, min(wait * 2, RESEND_AT_MOST))
                log.warning("resend failed", tx_hash=row.tx_hash, error=str(exc))
            else:
                resends.pop(row.id, None)

    async def rebroadcast(self) -> None:
        """After a restart: send again whatever the journal has not seen mined (and count what
        it may still take from the key)."""
        for row in await self.in_flight():
            self.funds.commit(row.nonce, row_cost(row))
            try:
                await self._broadcast(row)
            except ChainError as exc:
                log.warning("rebroadcast failed", tx_hash=row.tx_hash, error=str(exc))

    async def mined_for(
        self, request_id: str | None, purpose: str
    ) -> tuple[SentTransaction, dict[str, Any]] | None:
        """The journalled transaction for this purpose that got mined, with its receipt.

        Looks at every version of the latest attempt (an original and its replacements share
        one nonce, so at most one is ever mined) and marks the rest dropped. An attempt that
        reverted and was signed afresh (a refund), or whose nonce another transaction took,
        leaves older nonces behind: ignored.
        """
        return await self._mined_version(await self._latest_attempt(request_id, purpose))

    async def attempt(self, request_id: str | None, purpose: str) -> Attempt:
        """What became of the latest attempt for `(request_id, purpose)`: `Mined` (reverted or
        not), `InFlight`, or None when there is nothing to wait for: nothing was journalled
        for it, or its nonce went to a transaction this journal did not sign (`nonce_taken`).
        On None the caller signs a new attempt, which takes a new nonce. Every journalled
        sender asks this, so none waits for ever on a nonce taken outside the service."""
        versions = await self._latest_attempt(request_id, purpose)
        if not versions:
            return None
        mined = await self._mined_version(versions)
        if mined is not None:
            return Mined(*mined)
        if await self._never_mined(versions):
            return None
        return InFlight(max(versions, key=lambda row: row.id))

    async def _mined_version(
        self, versions: Sequence[SentTransaction]
    ) -> tuple[SentTransaction, dict[str, Any]] | None:
        """Of one nonce's versions, the one with a receipt, recorded mined (or failed) and the
        others dropped; with its receipt. None when none has one."""
        for row in versions:
            receipt = await self.client.receipt(row.tx_hash)
            if receipt is None:
                continue
            await self._set_status(
                row.id,
                "mined" if receipt["status"] == 1 else "failed",
                int(receipt["blockNumber"]),
                HexBytes(receipt["blockHash"]).to_0x_hex(),
                fee=fee_paid(receipt),
            )
            for sibling in versions:
                if sibling.id != row.id and sibling.nonce == row.nonce:
                    await self._set_status(sibling.id, "dropped")
            return row, dict(receipt)
        return None

    async def _latest_attempt(self, request_id: str | None, purpose: str) -> list[SentTransaction]:
        async with self.sessions() as session:
            versions = list(
                await session.scalars(
                    select(SentTransaction).where(
                        SentTransaction.request_id == request_id,
                        SentTransaction.purpose == purpose,
                        SentTransaction.status.in_(ATTEMPTED),
                    )
                )
            )
        return _latest_of(versions)

    async def latest_attempts(
        self, request_ids: Sequence[str], purpose: str
    ) -> dict[str, list[SentTransaction]]:
        """`_latest_attempt` of many requests, in one query (those with none left out)."""
        if not request_ids:
            return {}
        async with self.sessions() as session:
            rows = await session.scalars(
                select(SentTransaction).where(
                    SentTransaction.request_id.in_(request_ids),
                    SentTransaction.purpose == purpose,
                    SentTransaction.status.in_(ATTEMPTED),
                )
            )
            by_request: dict[str, list[SentTransaction]] = {}
            for row in rows:
                if row.request_id is not None:
                    by_request.setdefault(row.request_id, []).append(row)
        return {
            request_id: latest
            for request_id, versions in by_request.items()
            if (latest := _latest_of(versions))
        }

    async def unmined(self, attempts: dict[str, list[SentTransaction]]) -> set[str]:
        """Of these latest attempts (`latest_attempts`), by request, those still in flight and
        provably not mined: their nonce not yet used on chain (one nonce count for all of
        them). `mined_for` and `nonce_taken` would find nothing for them."""
        watched = {
            request_id: latest[0].nonce
            for request_id, latest in attempts.items()
            if all(row.status in WATCHED for row in latest)
        }
        if not watched:
            return set()
        mined_nonce = await self.client.mined_nonce(self.sender)
        unmined = {request_id for request_id, nonce in watched.items() if nonce >= mined_nonce}
        for request_id in unmined:
            self._suspected.pop(watched[request_id], None)  # as `_taken` finds it: not taken
        return unmined

    async def mined_each(
        self, attempts: dict[str, list[SentTransaction]]
    ) -> dict[str, MinedAttempt]:
        """Of these latest attempts, by request, the version mined (reverted or not) with its
        receipt, their receipts read together: `mined_for`, read only; each is recorded with
        `record_mined_in`, in the caller's transaction. Those not found mined are left out."""
        versions = [row for latest in attempts.values() for row in latest]
        receipts = await asyncio.gather(*(self.client.receipt(row.tx_hash) for row in versions))
        by_hash = {row.tx_hash: receipt for row, receipt in zip(versions, receipts, strict=True)}
        found: dict[str, MinedAttempt] = {}
        for request_id, latest in attempts.items():
            for row in latest:
                receipt = by_hash[row.tx_hash]
                if receipt is not None:
                    found[request_id] = MinedAttempt(row, dict(receipt), latest)
                    break
        return found

    async def record_mined_in(self, session: AsyncSession, mined: MinedAttempt) -> None:
        """What `mined_for` records of a version found mined (`mined_each`), in the caller's
        transaction: mined or failed, with its fee; the other versions of its nonce dropped.
        `mined_recorded` once it has committed."""
        rows = {
            row.id: row
            for row in await session.scalars(
                select(SentTransaction).where(
                    SentTransaction.id.in_([version.id for version in mined.versions])
                )
            )
        }
        row, receipt = rows[mined.row.id], mined.receipt
        await self._status_in(
            session,
            row,
            "mined" if receipt["status"] == 1 else "failed",
            int(receipt["blockNumber"]),
            HexBytes(receipt["blockHash"]).to_0x_hex(),
            fee=fee_paid(receipt),
        )
        for sibling in rows.values():
            if sibling.id != row.id and sibling.nonce == row.nonce:
                await self._status_in(session, sibling, "dropped")

    def mined_recorded(self, mined: MinedAttempt) -> None:
        """The transaction of `record_mined_in` committed: the nonce takes nothing more."""
        self.funds.release(mined.row.nonce)

    async def mined_since(self, block_number: int) -> list[SentTransaction]:
        """This signer's transactions on this chain mined in `block_number` or later, reverted
        (`failed`) or not, the newest block first (`mined_watch`)."""
        async with self.sessions() as session:
            rows = await session.scalars(
                select(SentTransaction)
                .where(
                    *self._own(),
                    SentTransaction.status.in_(("mined", "failed")),
                    SentTransaction.block_number >= block_number,
                )
                .order_by(SentTransaction.block_number.desc(), SentTransaction.nonce.desc())
            )
            return list(rows)

    async def mined_in(
        self, row: SentTransaction, block_number: int, block_hash: str, *, succeeded: bool
    ) -> None:
        """A mined transaction found in another block than recorded (a reorg included it
        again), with what it did there."""
        await self._set_status(row.id, "mined" if succeeded else "failed", block_number, block_hash)

    async def send_again(self, row: SentTransaction) -> None:
        """Broadcast a journalled transaction once more: the same signed bytes, so the same
        transaction (a node that has it already is no failure)."""
        await self._broadcast(row)

    async def nonce_taken(self, request_id: str, purpose: str) -> bool:
        """True when the latest attempt for this purpose can never be mined (call after
        `mined_for` found none): its nonce went to another transaction (see `_taken`), now
        or before. A new attempt, with a new nonce, is the caller's to make."""
        return await self._never_mined(await self._latest_attempt(request_id, purpose))

    async def _never_mined(self, attempt: Sequence[SentTransaction]) -> bool:
        """`attempt` (one nonce's versions, none with a receipt) can never be mined: its
        nonce was found taken, now (`_taken`) or before."""
        if await self._taken([row for row in attempt if row.status in WATCHED]):
            return True
        return bool(attempt) and all(row.status == "conflicted" for row in attempt)

    async def _taken(self, waiting: Sequence[SentTransaction]) -> bool:
        """True when the chain has used the nonce of `waiting` (one nonce's versions, none
        with a receipt) for another transaction, still so `CONFLICT_CONFIRMATION` later (a node
        behind the one that counted may not have our receipt yet). They are then marked
        `conflicted` and the nonce count is read afresh."""
        if not waiting:
            return False
        nonce = waiting[0].nonce
        if nonce >= await self.client.mined_nonce(self.sender):
            self._suspected.pop(nonce, None)
            return False
        now = self.now()
        if now - self._suspected.setdefault(nonce, now) < CONFLICT_CONFIRMATION:
            return False
        del self._suspected[nonce]
        for row in waiting:
            await self._set_status(row.id, "conflicted")
        self._next_nonce = None
        log.error(
            "nonce used by a transaction the journal did not sign: signed again",
            chain_id=self.client.chain_id,
            nonce=nonce,
            request_id=waiting[0].request_id,
            purpose=waiting[0].purpose,
        )
        return True

    async def void_taken(self, void: SentTransaction) -> bool:
        """True when another transaction than `void` (or the one it displaces) used its nonce
        (see `_taken`): the nonce is used, which is all a void is for; it is sent no more."""
        async with self.sessions() as session:
            versions = await self._void_versions(session, void.nonce)
        return await self._taken([row for row in versions if row.status in WATCHED])

    async def for_request(self, request_id: str | None, purpose: str) -> SentTransaction | None:
        async with self.sessions() as session:
            return await journalled(session, request_id, purpose)


def _latest_of(versions: Sequence[SentTransaction]) -> list[SentTransaction]:
    """The latest attempt's versions (its nonce the newest), those not dropped."""
    newest = max((row.nonce for row in versions), default=None)
    return [row for row in versions if row.nonce == newest and row.status != "dropped"]


async def journalled(
    session: AsyncSession, request_id: str | None, purpose: str
) -> SentTransaction | None:
    """The latest transaction journalled for `(request_id, purpose)`, in the caller's session."""
    return await session.scalar(
        select(SentTransaction)
        .where(SentTransaction.request_id == request_id, SentTransaction.purpose == purpose)
        .order_by(SentTransaction.id.desc())
        .limit(1)
    )


async def journalled_each(
    session: AsyncSession, request_ids: Sequence[str], purpose: str
) -> dict[str, SentTransaction]:
    """`journalled` for many requests in one query: the latest of each that has one."""
    rows = await session.scalars(
        select(SentTransaction)
        .where(SentTransaction.request_id.in_(request_ids), SentTransaction.purpose == purpose)
        .order_by(SentTransaction.id)
    )
    return {row.request_id: row for row in rows if row.request_id is not None}
