"""Refunder, one per origin chain: pays deposits back out of the Depository, or, for deposits
the Receiver forwarded to the solver (protocol v1), out of the solver's inventory.

Due for refund, whatever happened first (`store.deposits.due_for_refund`): the deposit of a
failed request (to its `refundTo`), the excess an accepted deposit paid above its quote (to the
same), and every stray (`domain.deposit_checks`: an unknown order's, a second deposit for a
paid order, one after its request ended, refused dust), to its depositor. The payout is a
Depository `execute` call signed by the allocator and sent by the solver key, net of its own
gas, and of the gas of the order's fills that were mined and reverted (`app.refunds`); when
that would eat the deposit, nothing is sent and the deposit records AMOUNT_TOO_LOW_TO_REFUND
(so does the request it decided). A v1 refund is a plain transfer from the solver key. Either
is journalled before it is broadcast, under the deposit, so it is sent once whatever happens to
this process, and signed again should another transaction take its nonce
(`TxManager.attempt`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import structlog
from eth_account.signers.local import LocalAccount
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.app.refunds import (
    failed_fills_usd,
    plan_refund,
    plan_solver_refund,
    refund_calldata,
    refund_gas_cost,
    refund_recipient,
)
from crossfill.domain import books
from crossfill.domain.call_request import NONCE_ALREADY_USED
from crossfill.domain.record_facts import Moved
from crossfill.domain.status import RequestStatus
from crossfill.errors import ChainError, Reverted
from crossfill.kinds.evm.depository_logs import RECEIVER
from crossfill.kinds.evm.journalled_worker import JournalledWorker
from crossfill.kinds.evm.receipt_outcomes import depository_payout
from crossfill.kinds.evm.txmanager import InFlight, Mined
from crossfill.loops import each_on_its_own
from crossfill.quoting.money import from_usd_micros_ceil
from crossfill.quoting.prices import price_on_chain
from crossfill.store import books as ledger
from crossfill.store import deposits, requests
from crossfill.store.tables import Deposit, Request

log = structlog.get_logger(__name__)
REFUND = "refund"


@dataclass(eq=False)
class Refunder(JournalledWorker):
    job = "refunder"
    # Signs the refunds' allocator attestations.
    allocator: LocalAccount

    async def tick(self) -> None:
        await self.txmanager.hold_signer()  # another process signing: leave refunds to it
        await each_on_its_own(self.name, await self._due(), self._refund, label=str)
        await self._track()

    async def _due(self) -> list[int]:
        async with self.sessions() as session:
            due = await deposits.due_for_refund(session, self.config.id)
        return [deposit.id for deposit in due]

    async def _failed_fills_cost(self, deposit: Deposit) -> int:
        """The gas of the order's fills that were mined and reverted, in the deposited
        currency (rounded up) at the prices quotes use now (see `app.refunds`). Without a
        value for it (no price when the fill was mined, or none now for the deposited
        currency) nothing is kept back for it: a refund never waits on that."""
        if deposit.request_id is None:
            return 0  # a stray: no fill was ever its
        async with self.sessions() as session:
            transactions = await requests.transactions_of(session, deposit.request_id)
        usd = failed_fills_usd(deposit, transactions)
        if usd is None:
            log.warning("a reverted fill has no value: its gas is not kept", deposit_id=deposit.id)
            return 0
        if usd == 0:
            return 0
        currency = self.config.currency(deposit.currency)
        now_seconds = int(self.now().timestamp())
        price = (
            None
            if currency is None
            else price_on_chain(self.config, self.chain.state, currency, now_seconds)
        )
        if currency is None or price is None:
            # The refund is not held for a price: the fill's gas is then the service's.
            log.warning("no price to keep a reverted fill's gas at", deposit_id=deposit.id)
            return 0
        return from_usd_micros_ceil(usd, currency.decimals, price)

    async def _refund(self, deposit_id: int) -> None:
        purpose = f"{REFUND}:{deposit_id}"
        async with self.sessions() as session:
            deposit = await session.get(Deposit, deposit_id)
            assert deposit is not None
            refund_to = await self._refund_to(session, deposit)
        attempt = await self.txmanager.attempt(deposit.request_id, purpose)
        if isinstance(attempt, InFlight) or (isinstance(attempt, Mined) and attempt.succeeded):
            await self._mark_submitted(deposit.id, attempt.row.tx_hash, None)
            # Resume the refund already signed; one that reverted, or whose nonce another
            # transaction took, is signed afresh (under the same payout nonce: paid once).
            return
        native = deposit.currency == self.config.native_currency.address.lower()
        cost = refund_gas_cost(self.chain, deposit.currency, now=self.now())
        if cost is None:
            if self.config.currency(deposit.currency) is None:
                # A token the chain does not serve: no price to net its gas from; kept.
                await self._skip(deposit.id, deposits.UNSERVED_CURRENCY)
                return
            log.warning("refund waits for a gas price or a price", deposit_id=deposit.id)
            return
        cost += await self._failed_fills_cost(deposit)
        if deposit.paid_to == RECEIVER:
            await self._refund_from_solver(deposit, refund_to, cost, purpose)
            return
        refund = plan_refund(deposit, refund_to, native=native, gas_cost=cost, now=self.now())
        if refund is None:
            await self._skip(deposit.id, deposits.TOO_SMALL_TO_RETURN)
            return
        data = refund_calldata(
            refund,
            self.allocator,
            chain_id=self.config.id,
            depository=self.config.contracts.depository,
        )
        try:
            gas = await self.gas_for(self.config.contracts.depository, data)
        except Reverted as revert:
            if revert.reason.name == NONCE_ALREADY_USED:
                await self._paid_out_already(deposit.id)
                return
            log.error(
                "refund reverts in simulation; retried",
                deposit_id=deposit.id,
                reason=revert.reason.message,
            )
            return
        except ChainError as exc:
            log.warning("refund simulation failed; retried", deposit_id=deposit.id, error=str(exc))
            return
        row = await self.send_estimated(
            self.config.contracts.depository, data, gas, purpose=purpose,
            request_id=deposit.request_id,
        )  # fmt: skip
        await self._mark_submitted(deposit.id, row.tx_hash, refund.amount)

    async def _refund_to(self, session: AsyncSession, deposit: Deposit) -> str | None:
        """The `refundTo` of the request the deposit is owed to (None for a stray)."""
        if deposit.request_id is None:
            return None
        request = await requests.get(session, deposit.request_id)
        return request.refund_to if request is not None else None

    async def _refund_from_solver(
        self, deposit: Deposit, refund_to: str | None, cost: int, purpose: str
    ) -> None:
        """A v1 deposit: the solver pays it back itself, in ether (the Receiver takes nothing
        else)."""
        refund = plan_solver_refund(deposit, refund_to, gas_cost=cost)
        if refund is None:
            await self._skip(deposit.id, deposits.TOO_SMALL_TO_RETURN)
            return
        try:
            gas = await self.gas_for(refund.recipient, b"", refund.amount)
        except ChainError as exc:
            log.warning("refund simulation failed; retried", deposit_id=deposit.id, error=str(exc))
            return
        row = await self.send_estimated(
            refund.recipient, b"", gas, value=refund.amount, purpose=purpose,
            request_id=deposit.request_id,
        )  # fmt: skip
        await self._mark_submitted(deposit.id, row.tx_hash, refund.amount)

    async def _paid_out_already(self, deposit_id: int) -> None:
        """The deposit's payout nonce is used: a payout signed for it earlier executed (sent
        by someone holding that signature), so it is refunded, once, and nothing more is."""
        now = self.now()
        async with self.sessions() as session, session.begin():
            deposit = await session.get(Deposit, deposit_id)
            assert deposit is not None
            deposit.refund_status = "done"
            log.warning("deposit was paid back by an earlier signed payout", deposit_id=deposit_id)
            # Booked as all of it: a payout signed net of its gas leaves the rest on chain,
            # shown unexplained for the operator.
            await ledger.refunded(
                session, deposit, int(deposit.amount), self._holder(deposit), now=now
            )
            request = await self._decided(session, deposit)
            if request is not None and request.status == RequestStatus.FAILURE:
                await requests.move(session, request, RequestStatus.REFUND, now=now)

    def _holder(self, deposit: Deposit) -> str:
        """The account in the books that held the deposit and paid it back."""
        if deposit.paid_to == RECEIVER:
            return books.key_account(self.chain.follower.solver)
        return books.DEPOSITORY

    async def _skip(self, deposit_id: int, reason: str) -> None:
        async with self.sessions() as session, session.begin():
            deposit = await deposits.keep(session, deposit_id, reason, now=self.now())
        log.warning(
            "deposit kept: not refunded",
            deposit_id=deposit_id,
            amount=deposit.amount,
            currency=deposit.currency,
            reason=reason,
        )

    async def _decided(self, session: AsyncSession, deposit: Deposit) -> Request | None:
        """The request `deposit` decided (None for a stray or an excess)."""
        if not deposits.decides(deposit):
            return None
        assert deposit.request_id is not None
        return await requests.get(session, deposit.request_id)

    async def _mark_submitted(self, deposit_id: int, tx_hash: str, net: int | None) -> None:
        async with self.sessions() as session, session.begin():
            deposit = await session.get(Deposit, deposit_id)
            assert deposit is not None
            deposit.refund_status = "submitted"
            deposit.refund_tx_hash = tx_hash
            if net is not None:
                deposit.refund_amount = str(net)

    async def _track(self) -> None:
        async with self.sessions() as session:
            submitted = list(
                await session.scalars(
                    select(Deposit).where(
                        Deposit.chain_id == self.config.id, Deposit.refund_status == "submitted"
                    )
                )
            )
        await each_on_its_own(
            f"refunder-{self.config.id}",
            submitted,
            self._track_one,
            label=lambda deposit: deposit.id,
        )

    async def _track_one(self, deposit: Deposit) -> None:
        attempt = await self.txmanager.attempt(deposit.request_id, f"{REFUND}:{deposit.id}")
        if isinstance(attempt, Mined):
            await self._settle(deposit.id, attempt.row.tx_hash, attempt.receipt)
        elif attempt is None:  # its nonce went to another transaction: signed again
            await self._refund(deposit.id)

    async def _sent_value(self, deposit: Deposit, tx_hash: str) -> int | None:
        """What a v1 refund (a plain transfer) paid: its transaction's value. None for a
        Depository payout, whose amount its receipt's logs say."""
        if deposit.paid_to != RECEIVER:
            return None
        tx = await self.chain.client.sent_transaction(tx_hash)
        if tx is None:
            raise ChainError(f"refund {tx_hash} mined but not found")
        return tx.value

    def _refunded(
        self, deposit: Deposit, recipient: str, receipt: dict[str, Any], sent: int | None
    ) -> Moved:
        """What the refund paid back, read from the chain, valued at the prices quotes use."""
        amount = (
            sent
            if sent is not None
            else depository_payout(
                receipt["logs"],
                depository=self.config.contracts.depository,
                currency=deposit.currency,
                recipient=recipient,
            )
        )
        return self.valued(deposit.currency, amount, self.now())

    async def _settle(self, deposit_id: int, tx_hash: str, receipt: dict[str, Any]) -> None:
        now = self.now()
        succeeded = receipt["status"] == 1
        block = await self.chain.client.block_at(int(receipt["blockNumber"]))
        async with self.sessions() as session:
            known = await session.get(Deposit, deposit_id)
            assert known is not None
            sent = await self._sent_value(known, tx_hash) if succeeded else None
        async with self.sessions() as session, session.begin():
            deposit = await session.get(Deposit, deposit_id)
            assert deposit is not None
            deposit.refund_status = "done" if succeeded else None  # a failed refund is retried
            deposit.refund_tx_hash = tx_hash
            moved = None
            if succeeded:
                # What it paid, as the chain says (a refund resumed after a restart was never
                # told its amount): the gas it kept is the deposit less this.
                recipient = refund_recipient(deposit, await self._refund_to(session, deposit))
                moved = self._refunded(deposit, recipient, receipt, sent)
                deposit.refund_amount = str(moved.amount)
                await ledger.refunded(
                    session, deposit, moved.amount, self._holder(deposit), now=now
                )
            request = await self._decided(session, deposit)
            if request is None:
                return
            await self.record_mined(
                session, request.id, kind=REFUND, tx_hash=tx_hash, receipt=receipt, now=now,
                timestamp=block.timestamp if block else None, moved=moved,
            )  # fmt: skip
            if succeeded and request.status == RequestStatus.FAILURE:
                await requests.move(session, request, RequestStatus.REFUND, now=now)
