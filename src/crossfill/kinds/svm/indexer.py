"""SVM indexer: reads deposits to the solver vault and settles their requests.

The vault's own address, its token accounts of the served mints, and those of other mints the
chain lists for it (`svm_vault_accounts`) are listed (getSignaturesForAddress, one JSON-RPC
batch per tick) past the last signature seen (`until` it, once a listing was settled
to its newest entry, so an idle address answers an empty list); each transaction at the
chain's deposit commitment is read, and a transfer into the vault with a Memo naming an
order becomes a deposit (`deposits`, once per signature). The request moves to `pending` (its
EVM destination's solver fills it) when the deposit pays for it in currency and amount before
expiry; otherwise it fails with the reason and the SVM refunder pays the deposit back, as it
does a deposit with no order in its memo.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import structlog
from solders.pubkey import Pubkey
from sqlalchemy import select

from crossfill.domain import books
from crossfill.domain.deposit_checks import (
    DepositFacts,
    DepositVerdict,
    ExpectedDeposit,
    judge_deposit,
)
from crossfill.kinds.svm import programs
from crossfill.kinds.svm.config import SvmChainConfig
from crossfill.kinds.svm.deposits import VaultDeposit, read_vault_deposits
from crossfill.kinds.svm.programs import NATIVE_SOL_ADDRESS as NATIVE_SOL
from crossfill.kinds.svm.runtime import SvmChainRuntime
from crossfill.kinds.svm.transactions import LAMPORTS_PER_SIGNATURE
from crossfill.kinds.svm.values import moved
from crossfill.kinds.svm.vault_accounts import UnservedTokenAccounts, whole_history
from crossfill.loops import run_every
from crossfill.store import books as ledger
from crossfill.store import deposits, requests
from crossfill.store.db import as_utc
from crossfill.store.tables import ChainCursor, Deposit, Request
from crossfill.workers.kind_worker import KindWorker

log = structlog.get_logger(__name__)
PAGE = 1000
FINALIZED_ONLY = frozenset({"finalized"})
CONFIRMED_OR_FINALIZED = frozenset({"confirmed", "finalized"})
BLOCK_TIME_SLACK_SECONDS = 2


def cursor_role(address: Pubkey) -> str:
    """The address's cursor in `chain_cursors`."""
    return f"svm:{str(address)[:28]}"


@dataclass
class _Position:
    """An address's cursor as this process last read or wrote it (the slot below which all is
    settled), and the newest signature listed for it once every entry listed was settled."""

    slot: int
    newest: str | None = None


@dataclass(eq=False)
class SvmIndexer(KindWorker[SvmChainRuntime]):
    job = "svm-indexer"

    def __post_init__(self) -> None:
        self.config: SvmChainConfig = self.chain.config
        vault = Pubkey.from_string(self.config.solver.address)
        served = [Pubkey.from_string(token.address) for token in self.config.token_currencies]
        self.served_accounts = [vault] + [programs.token_account(vault, mint) for mint in served]
        # The vault's token accounts of other mints: found on the chain, read from their start.
        self.unserved = UnservedTokenAccounts(self.chain.client, vault, served, now=self.now)
        # Signatures read this process's lifetime (a re-listed one is not fetched again).
        self.settled: set[str] = set()
        # Each address's cursor, kept between this indexer's own writes (role -> position):
        # read once from `chain_cursors`, again after a write of it failed; all of it belongs
        # to the chain whose genesis hash is `_genesis`.
        self._positions: dict[str, _Position] = {}
        self._genesis: str | None = None
        self.commitments = (
            FINALIZED_ONLY
            if self.config.deposit_commitment == "finalized"
            else CONFIRMED_OR_FINALIZED
        )

    async def run(self) -> None:
        await run_every(self.name, self.tick, self.interval_seconds)

    async def tick(self) -> None:
        # Which chain this is (a restarted devnet is a new one), read once per tick.
        genesis = await self.chain.client.genesis_hash()
        if genesis != self._genesis:
            self._positions.clear()  # another chain under this id: its cursors are read again
            self.unserved.forget()
            self._genesis = genesis
        await self.unserved.refresh()  # when due; a failure is retried later, never raised
        watched = [*self.served_accounts, *self.unserved.followed]
        kept = [self._positions.get(cursor_role(address)) for address in watched]
        # Every address listed in one round trip (a JSON-RPC batch).
        listings = await self.chain.client.signatures_for_each(
            [
                (address, position.newest if position is not None else None)
                for address, position in zip(watched, kept, strict=True)
            ],
            limit=PAGE,
        )
        for address, listed in zip(watched, listings, strict=True):
            await self._scan(address, listed, genesis)

    async def _scan(self, address: Pubkey, listed: list[dict[str, Any]], genesis: str) -> None:
        """Every signature listed above the address's durable cursor, oldest first. The cursor is a
        slot below which all is settled; it trails the slot being read by one, so a crash in
        the middle of a slot reads that slot again (deposits are recorded once per signature).
        Once a listing was settled to its newest entry, the next one lists only what is newer
        (`until` that signature: slots at the commitment are complete, so nothing new can
        appear below it), and an idle address answers an empty list.
        """
        role = cursor_role(address)
        position = self._positions.get(role)
        if position is None:
            position = await self._stored(role, genesis)
        if position is None and self.unserved.follows(address):
            # An unserved mint's account, new to this chain's cursors: its deposits can only
            # be kept, so all of its history is read (one already recorded is not again).
            listed = await whole_history(self.chain.client, address, listed, limit=PAGE)
            position = _Position(0)
        if position is None:
            # First start on this chain (or a new chain under the same id, a restarted
            # devnet): history before it, the vault's funding, is no deposit of ours.
            await self._advance(role, await self._adopt_history(listed), genesis, reset=True)
            return
        self._positions[role] = position
        for entry in sorted(listed, key=lambda entry: int(entry["slot"])):
            slot = int(entry["slot"])
            if slot <= position.slot or entry["signature"] in self.settled:
                continue
            if entry.get("confirmationStatus") not in self.commitments:
                return  # later ones wait for it: the cursor never passes a signature
            if entry.get("err") is None:
                await self._read(entry["signature"])
            self.settled.add(entry["signature"])
            await self._advance(role, slot - 1, genesis)
        if listed:
            # Listed newest first: all of it is settled, the next listing stops at its head.
            position.newest = str(listed[0]["signature"])

    async def _read(self, signature: str) -> None:
        """The transaction's deposits, recorded; a deposit of a mint not served has the vault's
        token accounts looked for (its account, if new, is followed from then on)."""
        landed = await self.chain.client.transaction(signature)
        for deposit in read_vault_deposits(landed, self.config.solver.address):
            await self._record(deposit)
            if deposit.currency != NATIVE_SOL:
                self.unserved.note_mint(Pubkey.from_string(deposit.currency))

    async def _stored(self, role: str, genesis: str) -> _Position | None:
        """The durable cursor, when it belongs to this chain."""
        async with self.sessions() as session:
            cursor = await session.get(ChainCursor, (self.config.id, role))
        if cursor is None or cursor.block_hash != genesis:
            return None
        return _Position(cursor.block_number)

    async def _adopt_history(self, listed: list[dict[str, Any]]) -> int:
        """On a first scan, the deposits in history that pay for a request already waiting
        (one quoted and paid before any scan ran) are recorded; the rest is left alone. The
        answer is the slot the cursor starts at: the newest, or below the first of those
        deposits not yet at the deposit commitment, for the next scans to read."""
        newest = max((int(entry["slot"]) for entry in listed), default=0)
        async with self.sessions() as session:
            quoted = await requests.first_open_quote_from(session, self.config.id)
        if quoted is None:
            return newest
        # A slot's block time is whole seconds and may predate a transaction in it.
        since = int(as_utc(quoted).timestamp()) - BLOCK_TIME_SLACK_SECONDS
        for entry in sorted(listed, key=lambda entry: int(entry["slot"])):
            if entry.get("blockTime") is None or int(entry["blockTime"]) < since:
                continue
            if entry.get("confirmationStatus") not in self.commitments:
                return int(entry["slot"]) - 1
            if entry.get("err") is None:
                landed = await self.chain.client.transaction(entry["signature"])
                for deposit in read_vault_deposits(landed, self.config.solver.address):
                    if await self._pays_a_known_order(deposit):
                        await self._record(deposit)
            self.settled.add(entry["signature"])
        return newest

    async def _pays_a_known_order(self, deposit: VaultDeposit) -> bool:
        if not deposit.order_id:
            return False
        async with self.sessions() as session:
            return await requests.by_order_id(session, deposit.order_id) is not None

    async def _advance(self, role: str, slot: int, genesis: str, *, reset: bool = False) -> None:
        """The cursor (the slot and, in `block_hash`, the chain's genesis hash) moves up only;
        `reset` sets it, for a chain seen for the first time. The position kept in memory
        follows a committed write; a failed one drops it, for the next scan to read it again."""
        try:
            async with self.sessions() as session, session.begin():
                cursor = await session.get(ChainCursor, (self.config.id, role))
                if cursor is None:
                    cursor = ChainCursor(
                        chain_id=self.config.id,
                        role=role,
                        block_number=slot,
                        block_hash=genesis,
                        updated_at=self.now(),
                    )
                    session.add(cursor)
                elif reset or slot > cursor.block_number:
                    cursor.block_number, cursor.block_hash = slot, genesis
                    cursor.updated_at = self.now()
        except BaseException:
            self._positions.pop(role, None)
            raise
        kept = self._positions.get(role)
        if reset or kept is None:
            self._positions[role] = _Position(slot)
        else:
            kept.slot = max(kept.slot, slot)

    async def _record(self, deposit: VaultDeposit) -> None:
        now = self.now()
        async with self.sessions() as session, session.begin():
            known = await session.scalar(
                select(Deposit.id).where(
                    Deposit.chain_id == self.config.id,
                    Deposit.tx_hash == deposit.signature,
                    Deposit.log_index == deposit.index,
                    Deposit.part == deposits.WHOLE,
                )
            )
            if known is not None:
                return
            order_id = deposit.order_id
            request = await requests.by_order_id(session, order_id, lock=True) if order_id else None
            row = Deposit(
                chain_id=self.config.id, tx_hash=deposit.signature, log_index=deposit.index,
                part=deposits.WHOLE,
                block_number=deposit.slot, block_hash=deposit.recent_blockhash,
                order_id=order_id or "", depositor=deposit.sender, currency=deposit.currency,
                amount=str(deposit.amount), state=deposits.CONFIRMED, created_at=now,
            )  # fmt: skip
            session.add(row)
            # In the books as it landed (the vault holds it, owed to its user), before any
            # excess is split off it.
            await ledger.deposited(
                session, row, deposit.amount, books.key_account(self.config.solver.address),
                now=now, fresh=True,
            )  # fmt: skip
            judgement = await deposits.place(
                session,
                row,
                request,
                self._verdict(deposit, request),
                refund_cost=LAMPORTS_PER_SIGNATURE if deposit.currency == NATIVE_SOL else None,
            )
            log.info(
                "svm deposit",
                signature=deposit.signature,
                index=deposit.index,
                verdict=str(judgement.verdict),
                decides=judgement.decides,
            )
            shown = deposits.ShownDeposit(
                self.config.id, deposit.signature, deposit.slot, deposit.block_time,
                sender=deposit.sender, origin_block=deposit.slot, fee=deposit.fee,
                moved=moved(self.config, deposit.currency, deposit.amount),
            )  # fmt: skip
            await deposits.carry_out(session, request, judgement, shown, now=now)

    def _verdict(self, deposit: VaultDeposit, request: Request | None) -> DepositVerdict:
        if request is not None and deposit.currency != request.origin_currency:
            # Exact: base58 mints differing only in case are different mints.
            return DepositVerdict.WRONG_CURRENCY
        expected = None
        if request is not None:
            expected = ExpectedDeposit(
                origin_chain_id=request.origin_chain_id,
                currency=request.origin_currency,
                amount=int(request.amount_in),
                expires_at=int(as_utc(request.expires_at).timestamp()),
            )
        facts = DepositFacts(self.config.id, deposit.currency, deposit.amount, deposit.block_time)
        return judge_deposit(facts, expected)
