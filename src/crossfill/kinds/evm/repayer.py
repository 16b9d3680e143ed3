"""Repayer, one per origin chain: pays each deposit owed to the solver out of the Depository.

A deposit is owed to the solver once the order it paid for is filled and the fill is final on
the destination (`kinds.evm.fill_finality`). Owed deposits go out in batches
(`domain.repayments.batches_due`); each is paid its amount less the app fees it carried
(`store.app_fees.app_fee_shares`), to the solver's address, by a payout the allocator signs
under the deposit's own payout nonce (`app.repayments`).

A batch is recorded before anything is signed (`repayments` rows, `sending`, in the
transaction that checks each deposit is still owed and unrefunded; from then on the refunder
leaves it alone). Its payouts are then simulated one by one through the Multicaller: one whose
nonce is used already was paid by its refund (or by a payout signed earlier, sent by someone
else) and is recorded so; one the Depository refuses for another reason is recorded `refused`
for the operator; the rest are signed into one transaction, journalled before it is sent
(`TxManager`), under the batch's purpose. Once mined, each deposit whose payout the Depository
logged (`CallExecuted`, by its EIP-712 hash) is `repaid`, with its share of the transaction's
gas; one not paid is looked up on chain (`nonceUsed`): taken by another payout, recorded so,
or else sent again in a new attempt of the batch. A batch whose journal has nothing it can
still wait for (a crash before its transaction was journalled, or its nonce taken outside the
service) is signed again: the same payouts, under the same nonces.

Every chain failure ends the tick and is retried with the loop's backoff; only the Depository's
revert of a payout refuses it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import structlog
from eth_account.signers.local import LocalAccount
from eth_utils.address import to_checksum_address
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.app.refunds import payout_nonce
from crossfill.app.repayments import (
    SignedRepayment,
    batch_call,
    batch_purpose,
    sign_repayment,
    simulated_batch,
)
from crossfill.config import RebalancingTarget
from crossfill.contracts import calldata
from crossfill.contracts.reverts import decode_revert
from crossfill.domain.call_request import NONCE_ALREADY_USED, payout_expiration
from crossfill.domain.repayments import (
    PAID_ELSEWHERE,
    REFUNDED,
    REFUSED,
    REPAID,
    SENDING,
    BatchRules,
    Owed,
    batches_due,
    owed_amount,
    shares,
)
from crossfill.errors import Reverted
from crossfill.kinds.evm.fill_finality import FillFinality
from crossfill.kinds.evm.journalled_worker import JournalledWorker
from crossfill.kinds.evm.rebalancer import steered_currencies
from crossfill.kinds.evm.receipt_outcomes import executed_payouts, fee_paid
from crossfill.kinds.evm.txmanager import InFlight, Mined
from crossfill.loops import run_every
from crossfill.metrics import Metrics
from crossfill.quoting.prices import value_on_chain
from crossfill.store import app_fees, books, repayments
from crossfill.store.db import as_utc
from crossfill.store.repayments import OwedDeposit
from crossfill.store.tables import Deposit, Repayment

log = structlog.get_logger(__name__)
# Repayments are not urgent: owed deposits are looked for at most this often (seconds).
INTERVAL_AT_LEAST = 1.0


@dataclass(eq=False)
class Repayer(JournalledWorker):
    job = "repayer"
    # Signs the payouts' allocator attestations.
    allocator: LocalAccount
    finality: FillFinality
    rules: BatchRules
    metrics: Metrics
    # The rebalancing targets (`[[rebalancing.targets]]`, those of other chains ignored): a
    # currency the chain is short of has its owed deposits repaid at once (steering).
    steering: tuple[RebalancingTarget, ...] = ()

    async def run(self) -> None:
        await run_every(self.name, self.tick, max(self.interval_seconds, INTERVAL_AT_LEAST))

    async def tick(self) -> None:
        await self.txmanager.hold_signer()  # another process signing: leave repayments to it
        async with self.sessions() as session:
            sending = await repayments.sending_batches(session, self.config.id)
        for batch in sending:
            await self._follow(batch)
        for owed in await self._due():
            rows = await self._start(owed, await self._recipients(owed))
            if rows:
                await self._send(rows)

    async def _due(self) -> list[list[OwedDeposit]]:
        """The batches to send now, each deposit's fill checked final with its chain."""
        async with self.sessions() as session:
            listed = await repayments.owed_on(
                session,
                self.config.id,
                destinations=self.finality.serves(),
                limit=5 * self.rules.size,
            )
        now = self.now()
        values = {owed.deposit.id: self._value(owed.deposit, now) for owed in listed}
        looking_final = {
            owed.deposit.id: owed
            for owed in listed
            if self.finality.looks_final(owed, values[owed.deposit.id])
        }
        short = steered_currencies(self.chain, self.steering)
        candidates = [
            Owed(
                deposit_id,
                values[deposit_id],
                min(fill.recorded_at for fill in owed.fills),
                urgent=owed.deposit.currency.lower() in short,
            )
            for deposit_id, owed in looking_final.items()
        ]
        if any(entry.urgent for entry in candidates):
            log.info(
                "repayments steered: the chain is short", chain_id=self.config.id,
                currencies=sorted(short),
            )  # fmt: skip
        due = []
        for batch in batches_due(candidates, self.rules, now=now):
            final = [
                looking_final[entry.deposit_id]
                for entry in batch
                if await self.finality.final(
                    looking_final[entry.deposit_id], entry.value_usd_micros
                )
            ]
            if final:
                due.append(final)
        return due

    def _value(self, deposit: Deposit, now: datetime) -> int | None:
        return value_on_chain(
            self.config,
            self.chain.state,
            deposit.currency,
            int(deposit.amount),
            int(now.timestamp()),
        )

    async def _recipients(self, owed: Sequence[OwedDeposit]) -> dict[int, str]:
        """Whom each deposit is repaid to: the solver key, or, for an order an external solver
        won, whoever the destination's Filler logged filling it (the winner, or the solver key
        when the fallback filled it), read from the fill's receipt. Such a deposit whose filler
        is not read now is left out (repaid at a later tick)."""
        recipients = {}
        for entry in owed:
            if entry.exclusive_solver is None:
                recipients[entry.deposit.id] = self.txmanager.sender
            elif (filler := await self.finality.filler(entry)) is not None:
                recipients[entry.deposit.id] = filler
        return recipients

    def _external(self, recipient: str) -> bool:
        return recipient.lower() != self.txmanager.sender.lower()

    async def _start(
        self, owed: Sequence[OwedDeposit], recipients: dict[int, str]
    ) -> list[Repayment]:
        """The batch's rows, written in one transaction with each deposit checked still owed
        (not refunded nor repaid meanwhile) and paid what it is owed, to its recipient."""
        now = self.now()
        purpose = batch_purpose(owed[0].deposit.id)
        rows = []
        async with self.sessions() as session, session.begin():
            for entry in owed:
                deposit = entry.deposit
                if deposit.id not in recipients:
                    continue
                if not await repayments.still_owed(session, deposit.id):
                    continue
                amount = owed_amount(
                    int(deposit.amount), await app_fees.app_fee_shares(session, deposit)
                )
                if amount <= 0:
                    log.warning("deposit owes the solver nothing", deposit_id=deposit.id)
                    continue
                row = Repayment(
                    deposit_id=deposit.id, chain_id=self.config.id, request_id=entry.request_id,
                    currency=deposit.currency, amount=str(amount),
                    recipient=recipients[deposit.id], batch=purpose, state=SENDING,
                    created_at=now,
                )  # fmt: skip
                session.add(row)
                rows.append(row)
        return rows

    async def _follow(self, batch: list[Repayment]) -> None:
        """A batch on its way: settled once mined, signed again when nothing can be mined."""
        attempt = await self.txmanager.attempt(None, batch[0].batch)
        if isinstance(attempt, InFlight):
            return
        if isinstance(attempt, Mined):
            batch = await self._settle(batch, attempt)
            if not batch:
                return
        await self._send(batch)

    async def _send(self, batch: list[Repayment]) -> None:
        """Sign the batch's payouts, keep those that would execute (recording what became of
        the others), and send them in one journalled transaction."""
        head = self.chain.state.head
        if head is None:
            return
        signed = []
        for row in batch:
            expiration = payout_expiration(int(as_utc(row.created_at).timestamp()), head.timestamp)
            if expiration is None:
                return  # its authorisation is about to lapse: the next period's is signed then
            signed.append(await self._signed(row, expiration))
        executing = await self._simulated(batch, signed)
        if not executing:
            return
        depository = self.config.contracts.depository
        call = batch_call(executing, depository=depository, multicaller=self._multicaller)
        try:
            gas = await self.gas_for(call.to, call.data)
        except Reverted as revert:  # the simulation said otherwise a moment ago: tried again
            log.warning(
                "repayment reverts; retried", batch=batch[0].batch, reason=revert.reason.message
            )
            return
        sent = await self.send_estimated(
            call.to, call.data, gas, purpose=batch[0].batch, request_id=None
        )
        log.info(
            "repayments sent", chain_id=self.config.id, batch=batch[0].batch,
            deposits=len(executing), tx_hash=sent.tx_hash,
        )  # fmt: skip

    @property
    def _multicaller(self) -> str:
        contracts = self.config.contracts
        return contracts.multicall3 or contracts.multicaller

    async def _signed(self, row: Repayment, expiration: int) -> SignedRepayment:
        async with self.sessions() as session:
            deposit = await session.get(Deposit, row.deposit_id)
        assert deposit is not None
        return sign_repayment(
            deposit, row, self.allocator, expiration=expiration, chain_id=self.config.id,
            depository=self.config.contracts.depository,
        )  # fmt: skip

    async def _simulated(
        self, batch: list[Repayment], signed: list[SignedRepayment]
    ) -> list[SignedRepayment]:
        """The payouts that would execute now, recorded on their rows; the others' rows
        settled as the Depository's revert says."""
        outcome = await self.chain.client.simulate(
            {
                "from": to_checksum_address(self.txmanager.sender),
                "to": to_checksum_address(self._multicaller),
                "data": calldata.hex_data(
                    simulated_batch(signed, depository=self.config.contracts.depository)
                ),
            }
        )
        if not outcome.succeeded:
            raise Reverted(
                f"chain {self.config.id}: the repayment batch reverts as a whole",
                data=outcome.returned,
                reason=decode_revert(outcome.returned),
            )
        results = calldata.multicall_results(outcome.returned)
        executing = []
        now = self.now()
        async with self.sessions() as session, session.begin():
            for row, payout, (ok, returned) in zip(batch, signed, results, strict=True):
                current = await session.get(Repayment, row.id)
                assert current is not None
                if ok:
                    current.payout_id, current.expiration = payout.payout_id, payout.expiration
                    executing.append(payout)
                    continue
                reason = decode_revert(returned)
                if reason.name == NONCE_ALREADY_USED:
                    await self._taken(session, current, now)
                else:
                    self._refused(current, reason.message or returned.hex() or "reverted", now)
        return executing

    async def _settle(self, batch: list[Repayment], mined: Mined) -> list[Repayment]:
        """What the mined transaction paid, recorded; the batch's deposits it did not pay and
        nothing else did either (to be sent again)."""
        receipt = mined.receipt
        executed = executed_payouts(receipt["logs"], depository=self.config.contracts.depository)
        paid = [row for row in batch if row.payout_id in executed]
        unpaid = [row for row in batch if row.payout_id not in executed]
        used = {row.id: await self._nonce_used(row) for row in unpaid}
        gas = shares(int(receipt["gasUsed"]), len(paid))
        fees = shares(fee_paid(receipt), len(paid))
        now = self.now()
        async with self.sessions() as session, session.begin():
            for row, gas_used, fee in zip(paid, gas, fees, strict=True):
                current = await session.get(Repayment, row.id)
                assert current is not None
                current.state, current.settled_at = REPAID, now
                current.tx_hash, current.block_number = (
                    mined.row.tx_hash,
                    int(receipt["blockNumber"]),
                )
                current.gas_used, current.fee, current.batch_size = gas_used, str(fee), len(paid)
                await books.repaid(
                    session, current, now=now, external=self._external(current.recipient)
                )
                self._count(REPAID)
                self.metrics.repayment_gas_per_order.labels(self.config.id).observe(gas_used)
            for row in unpaid:
                if used[row.id]:
                    current = await session.get(Repayment, row.id)
                    assert current is not None
                    await self._taken(session, current, now)
        if paid:
            log.info(
                "deposits repaid to the solver", chain_id=self.config.id, tx_hash=mined.row.tx_hash,
                deposits=len(paid), gas_per_order=gas[-1], fee_per_order_wei=fees[-1],
            )  # fmt: skip
        return [row for row in unpaid if not used[row.id]]

    async def _nonce_used(self, row: Repayment) -> bool:
        async with self.sessions() as session:
            deposit = await session.get(Deposit, row.deposit_id)
        assert deposit is not None
        outcome = await self.chain.client.simulate(
            {
                "to": to_checksum_address(self.config.contracts.depository),
                "data": calldata.hex_data(calldata.depository_nonce_used(payout_nonce(deposit))),
            }
        )
        return outcome.succeeded and calldata.nonce_used_answer(outcome.returned)

    async def _taken(self, session: AsyncSession, row: Repayment, now: datetime) -> None:
        """Another payout under the deposit's nonce executed first: its refund when one was
        recorded, else a payout signed earlier that someone else sent. Either way the
        deposit is paid out, once; nothing more is tried."""
        deposit = await session.get(Deposit, row.deposit_id)
        refunded = deposit is not None and deposit.refund_status is not None
        row.state, row.settled_at = (REFUNDED if refunded else PAID_ELSEWHERE), now
        self._count(row.state)
        log.warning(
            "deposit paid out by another payout first: not repaid",
            deposit_id=row.deposit_id,
            outcome=row.state,
        )

    def _refused(self, row: Repayment, reason: str, now: datetime) -> None:
        row.state, row.settled_at, row.reason = REFUSED, now, reason[:200]
        self._count(REFUSED)
        log.error(
            "the Depository refuses a repayment: kept for the operator",
            deposit_id=row.deposit_id,
            reason=reason,
        )

    def _count(self, outcome: str) -> None:
        self.metrics.repayments.labels(self.config.id, outcome).inc()
