"""Deposit-address watcher and sweeper, one per origin chain.

Watch: at each head it scans the blocks since its cursor for transfers into the deposit
addresses quoted recently (`WATCH_WINDOW`, at most `MAX_WATCHED` addresses): ERC-20 `Transfer`
logs to them (one `eth_getLogs` over the range, the addresses as one topic list) and ether
paid to them by a transaction (the range's blocks with their transactions: one
`eth_getBlockByNumber` per block, none while no address is watched). On a chain whose RPC
serves traces, ether that contracts pay them is read from those (`kinds.evm.internal_transfers`)
in a loop and from a cursor of its own, so a trace the node cannot give holds that read only.
Each transfer is stored once, and the request it pays shows its depositor and transaction.

Sweep: once a transfer has the confirmations its value calls for and its block is still
canonical, it is assigned to a request (`app.deposit_addresses`: the first one to the quoted
request, later ones to child requests) and deposited into the Depository for that request's
order by the factory, which deploys the address's clone in the same transaction. The sweep is
journalled per request like fills and refunds (`kinds.evm.txmanager`), so a kill -9 at any
instant neither loses it nor sends it twice. The indexer then sees the Depository's deposit
as any other, and the solver fills or the refunder refunds. A transfer worth no more than its
own sweep's gas is not swept: a failed child request records it, and it stays at the address.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.app.deposit_addresses import (
    NO_QUOTES,
    OVERPAID,
    TOO_LOW_TO_REFUND,
    AddressOwner,
    arrival_request,
    dust_reason,
    excess,
    mismatch,
    repriced,
    sweep_of,
    too_small_to_sweep,
    unpriced_reason,
)
from crossfill.domain.confirmations import confirmations, required_confirmations
from crossfill.domain.deposit_addresses import SeenTransfer
from crossfill.domain.status import RequestStatus
from crossfill.errors import ChainError, Reverted
from crossfill.kinds.evm.client import BlockHead, LogFilter
from crossfill.kinds.evm.depository_logs import address_topic, decode_transfer, erc20_transfer_event
from crossfill.kinds.evm.journalled_worker import JournalledWorker
from crossfill.kinds.evm.txmanager import Mined
from crossfill.loops import each_on_its_own, run_forever, wait_interval
from crossfill.metrics import Metrics
from crossfill.quoting.deposit_address import DepositAddressTerms, sweep_gas
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.prices import gas_cost_on_chain, value_on_chain
from crossfill.quoting.request import QuoteRequest
from crossfill.store import address_transfers, requests
from crossfill.store.requests import QuoteRows
from crossfill.store.tables import AddressTransfer, Request
from crossfill.types import NATIVE_EVM_ADDRESS

log = structlog.get_logger(__name__)
PURPOSE = "sweep"
# Addresses are watched for a day after their quote, the newest thousand at most: the cost of
# a head is one log query and one block per new block, whatever the number of addresses.
WATCH_WINDOW = timedelta(days=1)
MAX_WATCHED = 1_000
BATCH_BLOCKS = 100
INITIAL_LOOKBACK_BLOCKS = 256
REWIND_BLOCKS = 64
# Where ether has no log: a transaction's own transfer is -1, the payments of its internal
# calls (`kinds.evm.internal_transfers`) -2, -3, ... by their ordinal.
INTERNAL_LOG_INDEX = -2
# A transaction the node answers for but cannot trace (a hundred thousand calls: megabytes of
# traces) is asked again at each read until it has failed this many times over this long.
UNTRACED_TRIES = 10
UNTRACED_GIVE_UP = timedelta(minutes=30)


# What one watch reads of the watched addresses' payments in blocks `start`..`end`.
_Read = Callable[[frozenset[str], int, int], Awaitable[list[SeenTransfer]]]


@dataclass(eq=False)
class DepositAddressSweeper(JournalledWorker):
    job = "deposit-addresses"
    # Prices an open address's arrival (`app.quotes.arrival_rows`); None: never priced.
    reprice: Callable[[QuoteRequest, DepositAddressTerms], QuoteRows] | None = None
    metrics: Metrics = field(default_factory=Metrics)

    def __post_init__(self) -> None:
        self.factory = self.config.contracts.deposit_address_factory
        self._tokens = tuple(sorted(c.address.lower() for c in self.config.erc20_currencies))
        self._wakeup = asyncio.Event()
        self._traces_wakeup = asyncio.Event()
        # By cursor role, the block (number, hash) this sweeper last committed that cursor at:
        # a tick at that same head has nothing to scan, and reads neither the addresses nor
        # the cursor.
        self._scanned_to: dict[str, tuple[int, str]] = {}
        # Transactions the node could not trace: how many reads failed on each, since when.
        self._untraced: dict[str, tuple[int, datetime]] = {}

    async def run(self) -> None:
        """The watch of tokens and plain transfers, and the sweeps."""
        if self.factory is None:
            return  # no deposit addresses on this chain
        await run_forever(self.name, self.tick, self._wait)

    async def run_traces(self) -> None:
        """On a chain whose RPC serves traces, the read of contracts' payments, a task of its
        own beside `run`: a trace the node cannot give (a transaction of a hundred thousand
        calls makes megabytes of them) holds that read and its own cursor only, never the
        other transfers or the sweeps."""
        if self.factory is None or self.config.trace_internal_transfers is None:
            return
        await run_forever(f"{self.name}-traces", self.traces_tick, self._wait_for_traces)

    def new_head(self, _head: BlockHead) -> None:
        self._wakeup.set()
        self._traces_wakeup.set()

    async def _wait(self) -> None:
        await wait_interval(self._wakeup, self.interval_seconds)

    async def _wait_for_traces(self) -> None:
        await wait_interval(self._traces_wakeup, self.interval_seconds)

    async def tick(self) -> None:
        await self.txmanager.hold_signer()  # another process signing: leave sweeps to it
        head = await self.chain.client.head()
        await self._watch(head, address_transfers.ROLE, self._transfers)
        async with self.sessions() as session:
            seen = await address_transfers.unswept(session, self.config.id, limit=20)
        await each_on_its_own(
            self.name, seen, lambda row: self._sweep(row, head), label=lambda row: row.tx_hash
        )

    async def traces_tick(self) -> None:
        """Contracts' payments, read from the node's traces; swept by `tick` as any other."""
        await self.txmanager.hold_signer()
        await self._watch(
            await self.chain.client.head(), address_transfers.TRACES_ROLE, self._traced
        )

    # -- watching ---------------------------------------------------------------------------

    async def _watch(self, head: BlockHead, role: str, read: _Read) -> None:
        """From the `role` cursor to the head, at most `BATCH_BLOCKS`: what `read` finds
        paid to the watched addresses is recorded, and the cursor moved, in one transaction."""
        if self._scanned_to.get(role) == (head.number, head.hash):
            return  # as `_after` would find: the cursor is this head
        now = self.now()
        async with self.sessions() as session:
            watched = await address_transfers.watched(
                session, self.config.id, since=now - WATCH_WINDOW, limit=MAX_WATCHED
            )
            cursor = await address_transfers.cursor(session, self.config.id, role)
        if cursor is None:
            start = max(0, head.number - INITIAL_LOOKBACK_BLOCKS)
        else:
            start = await self._after(cursor.block_number, cursor.block_hash, head)
        if start > head.number:
            return
        end = min(head.number, start + BATCH_BLOCKS - 1)
        found = await read(frozenset(watched), start, end) if watched else []
        end_block = head if end == head.number else await self.chain.client.block_at(end)
        if end_block is None:
            return
        async with self.sessions() as session, session.begin():
            for transfer in found:
                if await address_transfers.record(session, self.config.id, transfer, now):
                    log.info(
                        "transfer to a deposit address",
                        chain_id=self.config.id,
                        address=transfer.address,
                        tx_hash=transfer.tx_hash,
                    )
                    await self._show_payer(session, watched[transfer.address], transfer, now)
            await address_transfers.advance_cursor(
                session, self.config.id, end_block.number, end_block.hash, now, role
            )
        self._scanned_to[role] = (end_block.number, end_block.hash)

    async def _after(self, number: int, block_hash: str, head: BlockHead) -> int:
        """After the cursor's block if it is still canonical; else from `REWIND_BLOCKS` back (a
        reorg: transfers found again in other blocks follow them, see `address_transfers`)."""
        if number == head.number and block_hash == head.hash:
            return number + 1
        canonical = await self.chain.client.block_at(number)
        if canonical is not None and canonical.hash == block_hash:
            return number + 1
        log.warning("deposit-address cursor reorged; rewinding", chain_id=self.config.id)
        return max(0, number - REWIND_BLOCKS + 1)

    async def _transfers(
        self, addresses: frozenset[str], start: int, end: int
    ) -> list[SeenTransfer]:
        found: list[SeenTransfer] = []
        if self._tokens:
            topics = [address_topic(address) for address in sorted(addresses)]
            scanned = await self.chain.client.scan(
                [LogFilter(self._tokens, (erc20_transfer_event().topic, None, topics))], start, end
            )
            for entry in scanned.logs[0]:
                transfer = decode_transfer(entry)
                if transfer is None or transfer.to not in addresses:
                    continue
                found.append(
                    SeenTransfer(
                        address=transfer.to,
                        tx_hash=transfer.tx_hash,
                        log_index=transfer.log_index,
                        block_number=transfer.block_number,
                        block_hash=transfer.block_hash,
                        currency=transfer.token,
                        amount=transfer.amount,
                        depositor=transfer.sender,
                    )
                )
        for number in range(start, end + 1):
            for paid in await self.chain.client.value_transfers(number, addresses):
                found.append(
                    SeenTransfer(
                        address=paid.to,
                        tx_hash=paid.tx_hash,
                        log_index=-1,
                        block_number=paid.block.number,
                        block_hash=paid.block.hash,
                        currency=NATIVE_EVM_ADDRESS,
                        amount=paid.value,
                        depositor=paid.sender,
                    )
                )
        # In chain order, so the first transfer stored is the first one made.
        return sorted(found, key=lambda seen: (seen.block_number, seen.log_index))

    async def _traced(self, addresses: frozenset[str], start: int, end: int) -> list[SeenTransfer]:
        traces = self.config.trace_internal_transfers
        assert traces is not None  # the loop runs only then
        reading = await self.chain.client.internal_transfers(start, end, addresses, traces)
        self._hold_for_untraced(reading.untraced)
        return [
            SeenTransfer(
                address=internal.to,
                tx_hash=internal.tx_hash,
                log_index=INTERNAL_LOG_INDEX - internal.ordinal,
                block_number=internal.block_number,
                block_hash=internal.block_hash,
                currency=NATIVE_EVM_ADDRESS,
                amount=internal.value,
                depositor=internal.sender,
            )
            for internal in reading.paid
        ]

    def _hold_for_untraced(self, untraced: list[str]) -> None:
        """ChainError (the read is tried again, its cursor waits) while a transaction the node
        answered for but could not trace has failed fewer than `UNTRACED_TRIES` times or for
        less than `UNTRACED_GIVE_UP`; after that it is passed over, loudly: a payment it made
        is left to the address's recovery, and the read goes on (one transaction's traces
        must not hold every later payment's)."""
        now = self.now()
        held = []
        earlier, self._untraced = self._untraced, {}  # those traced since are forgotten
        for tx_hash in untraced:
            tries, since = earlier.get(tx_hash, (0, now))
            self._untraced[tx_hash] = (tries + 1, since)
            if tries + 1 < UNTRACED_TRIES or now - since < UNTRACED_GIVE_UP:
                held.append(tx_hash)
        if held:
            raise ChainError(
                f"chain {self.config.id}: the node could not give the traces of transaction "
                f"{held[0]}" + (f" and {len(held) - 1} more" if len(held) > 1 else "")
            )
        for tx_hash in untraced:
            tries, since = self._untraced.pop(tx_hash)
            self.metrics.traces_passed_over.labels(self.config.id).inc()
            log.error(
                "transaction passed over: the node could not give its traces",
                chain_id=self.config.id,
                tx_hash=tx_hash,
                tries=tries,
                since=since.isoformat(),
            )

    async def _show_payer(
        self, session: AsyncSession, request: Request, transfer: SeenTransfer, now: datetime
    ) -> None:
        """The first transfer to an address names its depositor on the quoted request; one
        too small to sweep never pays it, and does not name its sender there either."""
        if self._too_small(transfer.currency, transfer.amount):
            return
        row = await requests.get(session, request.id)
        if row is None or row.depositor is not None:
            return
        row.depositor = transfer.depositor
        row.deposit_tx_hash = transfer.tx_hash
        row.updated_at = now
        await requests.publish(session, row, now=now)

    # -- sweeping ---------------------------------------------------------------------------

    def _deep_enough(self, row: AddressTransfer, head: BlockHead) -> bool:
        usd = value_on_chain(
            self.config,
            self.chain.state,
            row.currency,
            int(row.amount),
            int(self.now().timestamp()),
        )
        tiers = self.config.confirmations
        needed = tiers[-1].blocks if usd is None else required_confirmations(tiers, usd)
        return confirmations(head.number, row.block_number) >= needed

    async def _sweep(self, row: AddressTransfer, head: BlockHead) -> None:
        if not self._deep_enough(row, head):
            return
        if row.request_id is None:
            block = await self.chain.client.block_at(row.block_number)
            if block is None or block.hash != row.block_hash:
                await self._settle(row.id, address_transfers.REORGED)
                log.warning("transfer to a deposit address reorged out", tx_hash=row.tx_hash)
                return
            request_id = await self._assign(row.id)
            if request_id is None:
                return
        else:
            request_id = row.request_id
        attempt = await self.txmanager.attempt(request_id, PURPOSE)
        if isinstance(attempt, Mined):
            ok = attempt.succeeded
            await self._settle(row.id, address_transfers.SWEPT if ok else address_transfers.FAILED)
            if not ok:
                log.error("sweep reverted", request_id=request_id, tx_hash=row.tx_hash)
            return
        if attempt is None:  # never sent, or its nonce went to another transaction
            await self._send(row.id, request_id)

    async def _assign(self, transfer_id: int) -> str | None:
        """The request this transfer pays (see `app.deposit_addresses`), decided once: stored
        with the transfer, with the child request it makes, in one transaction."""
        now = self.now()
        async with self.sessions() as session, session.begin():
            row = await session.get(AddressTransfer, transfer_id)
            assert row is not None
            owner = await address_transfers.owner_of(session, self.config.id, row.address)
            if owner is None:
                row.state = address_transfers.FAILED
                return None
            terms = _owner_terms(owner)
            if self._too_small(row.currency, int(row.amount)):
                child = await address_transfers.add_child(session, owner, row, now)
                await self._leave_dust(session, child, row, dust_reason(terms, row.currency), now)
                return None
            if repriced(terms):
                request = await self._arrival(session, owner, terms, row, now)
            elif await address_transfers.is_taken(session, owner.id):
                request = await address_transfers.add_child(session, owner, row, now)
            else:
                request = owner
                extra = excess(terms, int(owner.amount_in), row.currency, int(row.amount))
                if extra:
                    await self._refund_excess(session, owner, row, extra, now)
            if request.id != owner.id:
                log.info("child request", parent=owner.id, request_id=request.id)
            request.depositor = row.depositor
            request.deposit_tx_hash = row.tx_hash
            request.updated_at = now
            row.request_id = request.id
            if RequestStatus(request.status) is RequestStatus.WAITING:
                await requests.publish(session, request, now=now)
            return request.id

    async def _refund_excess(
        self,
        session: AsyncSession,
        owner: Request,
        row: AddressTransfer,
        extra: int,
        now: datetime,
    ) -> None:
        """An overpaid strict transfer: the excess is swept for a child request that has
        failed already, so the refunder pays it back to `refundTo`; an excess too small to
        sweep is left at the address instead."""
        leg = await address_transfers.split_excess(session, row, extra, now)
        child = await address_transfers.add_child(session, owner, leg, now)
        if self._too_small(leg.currency, extra):
            await self._leave_dust(session, child, leg, OVERPAID, now)
            return
        child.depositor, child.deposit_tx_hash = row.depositor, row.tx_hash
        leg.request_id = child.id
        await requests.move(session, child, RequestStatus.FAILURE, now=now, fail_reason=OVERPAID)
        log.info("overpaid: excess refunded", parent=owner.id, request_id=child.id, excess=extra)

    def _too_small(self, currency: str, amount: int) -> bool:
        """Whether `amount` of `currency` is worth no more than the gas its sweep is budgeted
        (`quoting.deposit_address.sweep_gas`) at the chain's fee per gas now."""
        native = currency.lower() == self.config.native_currency.address.lower()
        cost = gas_cost_on_chain(
            self.config,
            self.chain.state,
            currency,
            sweep_gas(self.config.fees, native=native),
            int(self.now().timestamp()),
        )
        return too_small_to_sweep(amount, cost)

    async def _leave_dust(
        self,
        session: AsyncSession,
        child: Request,
        leg: AddressTransfer,
        reason: str,
        now: datetime,
    ) -> None:
        """A transfer (or excess) too small to sweep: recorded on its child request, failed
        with `reason` and too low to refund, and left at the address (its recovery address
        can take it); never swept, so it costs the solver no gas."""
        child.depositor, child.deposit_tx_hash = leg.depositor, leg.tx_hash
        child.refund_fail_reason = TOO_LOW_TO_REFUND
        leg.request_id = child.id
        leg.state = address_transfers.TOO_SMALL
        await requests.move(session, child, RequestStatus.FAILURE, now=now, fail_reason=reason)
        self.metrics.deposit_address_dust.labels(self.config.id).inc()
        log.info(
            "transfer too small to sweep: left at the address",
            address=leg.address,
            tx_hash=leg.tx_hash,
            amount=leg.amount,
            request_id=child.id,
        )

    async def _arrival(
        self,
        session: AsyncSession,
        owner: Request,
        terms: AddressOwner,
        row: AddressTransfer,
        now: datetime,
    ) -> Request:
        """An open address's transfer: a child request priced now for what arrived; one that
        cannot be priced, or came in another currency, fails at once (and is refunded)."""
        reason = mismatch(terms, row.currency)
        if reason is None and self.reprice is not None:
            try:
                rows = self.reprice(arrival_request(terms, int(row.amount)), _address_of(owner))
            except QuoteError as exc:
                log.info("deposit-address arrival not priced", error=str(exc))
                reason = unpriced_reason(exc)
            else:
                return await address_transfers.add_priced_child(session, owner, rows)
        child = await address_transfers.add_child(session, owner, row, now)
        await requests.move(
            session, child, RequestStatus.FAILURE, now=now, fail_reason=reason or NO_QUOTES
        )
        return child

    async def _send(self, transfer_id: int, request_id: str) -> None:
        async with self.sessions() as session:
            request = await requests.get(session, request_id)
            row = await session.get(AddressTransfer, transfer_id)  # as assigned (its leg)
        assert request is not None and row is not None and self.factory is not None
        key = request.deposit_address_key
        assert key is not None
        sweep = sweep_of(
            key=key,
            recovery_address=request.recovery_address,
            transfer_currency=row.currency,
            amount=int(row.amount),
            depositor=row.depositor,
            order_id=request.order_id,
        )
        data = sweep.calldata()
        try:
            gas = await self.gas_for(self.factory, data)
        except Reverted as revert:
            # The funds are gone (recovered by the recovery address) or never arrived.
            log.warning(
                "sweep refused by the chain",
                request_id=request_id,
                tx_hash=row.tx_hash,
                reason=revert.reason.message,
            )
            await self._settle(row.id, address_transfers.FAILED)
            return
        await self.send_estimated(self.factory, data, gas, purpose=PURPOSE, request_id=request_id)

    async def _settle(self, transfer_id: int, state: str) -> None:
        async with self.sessions() as session, session.begin():
            row = await session.get(AddressTransfer, transfer_id)
            assert row is not None
            row.state = state


def _owner_terms(owner: Request) -> AddressOwner:
    return AddressOwner(
        type=owner.deposit_address_type or "strict",
        user=owner.user_address,
        origin_chain_id=owner.origin_chain_id,
        destination_chain_id=owner.destination_chain_id,
        origin_currency=owner.origin_currency,
        destination_currency=owner.destination_currency,
        recipient=owner.recipient,
        refund_to=owner.refund_to,
        recovery_address=owner.recovery_address,
        referrer=owner.referrer,
    )


def _address_of(owner: Request) -> DepositAddressTerms:
    assert owner.deposit_address is not None and owner.deposit_address_key is not None
    return DepositAddressTerms(
        address=owner.deposit_address,
        type=owner.deposit_address_type or "strict",
        recovery_address=owner.recovery_address,
        key=owner.deposit_address_key,
    )
