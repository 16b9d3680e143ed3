"""Perps watcher: reads transfers into the solver's exchange account and settles their requests.

The account's ledger (`userNonFundingLedgerUpdates`) is read from a durable cursor (the
newest entry's millisecond time, `chain_cursors`), that time included, since more entries may
share it; each transfer is recorded once (`deposits`, unique per hash), so neither a restart
nor a re-read counts one twice, and the cursor moves only after its entries are recorded.
The watcher keeps the cursor in memory between its own writes: read once, again after a write
of it failed.
A transfer is matched by (sender, nonce) through the sender's nonce mapping (POST /authorize)
to its request, and judged against the quote (`kinds.perps.transfers`). Accepted: the
request moves to `pending` and its EVM destination's solver fills it, as any other.
Otherwise the request, if any, fails with the verdict as its reason, and the perps refunder
sends the transfer back (the deposit row keeps what landed: its 1337 currency and amount).
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain import books
from crossfill.domain.record_facts import Moved
from crossfill.kinds.perps.client import LedgerUpdate, PerpsPort, Transfer
from crossfill.kinds.perps.config import (
    PERPS_USDC_ADDRESS,
    PERPS_USDC_DECIMALS,
    PerpsExchangeConfig,
)
from crossfill.kinds.perps.runtime import PerpsRuntime
from crossfill.kinds.perps.transfers import (
    IncomingTransfer,
    QuotedTransfer,
    judge_transfer,
)
from crossfill.loops import run_every
from crossfill.store import books as ledger
from crossfill.store import deposits, nonce_mappings, requests
from crossfill.store.db import as_utc
from crossfill.store.tables import ChainCursor, Deposit, Request
from crossfill.workers.kind_worker import KindWorker

log = structlog.get_logger(__name__)
ROLE = "perps-watch"
# A deposit row's currency for a token no configured currency names (never refunded by us).
UNKNOWN_TOKEN = "unknown"


def incoming(update: LedgerUpdate, account: str) -> IncomingTransfer | None:
    """The ledger entry as a transfer into `account` that carries a nonce; None otherwise."""
    delta = update.delta
    if not isinstance(delta, Transfer) or delta.nonce is None:
        return None
    if delta.destination.lower() != account.lower() or delta.user.lower() == account.lower():
        return None
    return IncomingTransfer(
        hash=update.hash,
        time_ms=update.time,
        sender=delta.user.lower(),
        token=delta.token.partition(":")[0],
        source_dex=delta.source_dex,
        destination_dex=delta.destination_dex,
        amount=delta.amount,
        nonce=delta.nonce,
    )


def landed_currency(
    transfer: IncomingTransfer, config: PerpsExchangeConfig
) -> tuple[str, int] | None:
    """What reached the solver's account, as a 1337 currency address and an amount in its
    smallest unit; None for a token this service does not hold (left to the operator)."""
    if transfer.destination_dex == "" and transfer.token == "USDC":
        units = transfer.units(PERPS_USDC_DECIMALS)
        return None if units is None else (PERPS_USDC_ADDRESS, units)
    dex = "" if transfer.destination_dex == "spot" else transfer.destination_dex
    spot = next(
        (c for c in config.spot_currencies if c.exchange_name == transfer.token and c.dex == dex),
        None,
    )
    if spot is None:
        return None
    units = transfer.units(spot.decimals)
    return None if units is None else (spot.address, units)


@dataclass(eq=False)
class PerpsWatcher(KindWorker[PerpsRuntime]):
    job = "perps-watcher"

    def __post_init__(self) -> None:
        self.client: PerpsPort = self.chain.client
        self.config: PerpsExchangeConfig = self.chain.config
        self.account = self.config.solver.address.lower()
        # The durable cursor as this watcher last read or wrote it; None: read it again.
        self._start: int | None = None

    async def run(self) -> None:
        await run_every(self.name, self.tick, self.interval_seconds)

    async def tick(self) -> None:
        start = self._start if self._start is not None else await self._cursor()
        self._start = start
        updates = await self.client.ledger_updates(self.account, start_ms=start)
        newest = start
        for update in sorted(updates, key=lambda update: update.time):
            transfer = incoming(update, self.account)
            if transfer is not None:
                await self._record(transfer)
            newest = max(newest, update.time)
        if newest > start:
            await self._advance(newest)

    async def _cursor(self) -> int:
        """Where reading starts. The first time (or for another solver account, whose
        `block_hash` it keeps): at the first withdrawal quoted, since no earlier transfer
        can be one (nor, then, now)."""
        async with self.sessions() as session, session.begin():
            cursor = await session.get(ChainCursor, (self.config.id, ROLE))
            if cursor is not None and cursor.block_hash == self.account:
                return cursor.block_number
            first = await session.scalar(
                select(func.min(Request.created_at)).where(
                    Request.origin_chain_id == self.config.id
                )
            )
            start = int(as_utc(first or self.now()).timestamp() * 1000)
            if cursor is None:
                cursor = ChainCursor(
                    chain_id=self.config.id,
                    role=ROLE,
                    block_number=start,
                    block_hash=self.account,
                    updated_at=self.now(),
                )
                session.add(cursor)
            else:
                cursor.block_number, cursor.block_hash = start, self.account
                cursor.updated_at = self.now()
            return start

    async def _advance(self, time_ms: int) -> None:
        self._start = None  # until the write below is known to have committed
        async with self.sessions() as session, session.begin():
            cursor = await session.get(ChainCursor, (self.config.id, ROLE))
            if cursor is None or cursor.block_hash != self.account:
                return  # gone or taken over: the next tick reads it again
            if time_ms > cursor.block_number:
                cursor.block_number = time_ms
                cursor.updated_at = self.now()
        self._start = time_ms

    async def _record(self, transfer: IncomingTransfer) -> None:
        now = self.now()
        async with self.sessions() as session, session.begin():
            known = await session.scalar(
                select(Deposit.id).where(
                    Deposit.chain_id == self.config.id, Deposit.tx_hash == transfer.hash
                )
            )
            if known is not None:
                return
            request = await self._request_of(session, transfer)
            currency, amount = landed_currency(transfer, self.config) or (UNKNOWN_TOKEN, 0)
            row = Deposit(
                chain_id=self.config.id, tx_hash=transfer.hash, log_index=0,
                part=deposits.WHOLE,
                block_number=transfer.time_ms, block_hash=transfer.hash,
                order_id=request.order_id if request is not None else "",
                depositor=transfer.sender, currency=currency, amount=str(amount),
                state=deposits.CONFIRMED, created_at=now,
            )  # fmt: skip
            session.add(row)
            # In the books as it landed: the solver's account holds it, owed to its user.
            await ledger.deposited(
                session, row, amount, books.key_account(self.account), now=now, fresh=True
            )
            # Exact amounts only (anything else is refused), and the exchange's own transfers
            # cost no gas: nothing is split off, nothing is dust.
            judgement = await deposits.place(
                session, row, request, judge_transfer(transfer, self._quoted(request)),
                refund_cost=None,
            )  # fmt: skip
            log.info("perps transfer", hash=transfer.hash, sender=transfer.sender,
                     nonce=transfer.nonce, verdict=str(judgement.verdict),
                     decides=judgement.decides)  # fmt: skip
            # The exchange has no blocks (nor a ledger height): the record shows `block` 0, as
            # it does for fills and refunds, and the ledger's time as the timestamp.
            landed = (
                None
                if currency == UNKNOWN_TOKEN
                else Moved(currency, amount, self.config.usd_value(currency, amount))
            )
            shown = deposits.ShownDeposit(
                self.config.id, transfer.hash, 0, transfer.time_ms // 1000, moved=landed
            )
            await deposits.carry_out(session, request, judgement, shown, now=now)

    async def _request_of(
        self, session: AsyncSession, transfer: IncomingTransfer
    ) -> Request | None:
        """The request the sender mapped this nonce to, if it withdraws from this exchange."""
        mapping = await nonce_mappings.of_wallet_nonce(session, transfer.sender, transfer.nonce)
        if mapping is None:
            return None
        request = await requests.get(session, mapping.request_id, lock=True)
        if request is None or request.origin_chain_id != self.config.id:
            return None
        if request.user_address.lower() != transfer.sender:
            # Anyone may map their own nonce to any request; only its user's transfer may
            # pay for it (or fail it), so a stranger's goes back to the stranger.
            return None
        return request

    def _quoted(self, request: Request | None) -> QuotedTransfer | None:
        if request is None:
            return None
        plan = request.plan or {}
        return QuotedTransfer(
            token=str(plan.get("token", "USDC")),
            source_dex=str(plan.get("sourceDex", "")),
            amount=int(request.amount_in),
            decimals=PERPS_USDC_DECIMALS,
            expires_at_ms=int(as_utc(request.expires_at).timestamp() * 1000),
        )
