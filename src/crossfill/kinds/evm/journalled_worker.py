"""What a worker that sends through one chain's journal holds (the solver, the deposit-address
sweeper, the permit depositor, the sponsor collector, the gasless executor, the refunder, the
app-fee payer); each of them adds only its own work."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from datetime import datetime
from typing import Any, ClassVar

from eth_utils.address import to_checksum_address
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.contracts import calldata
from crossfill.domain.gas import with_gas_headroom
from crossfill.domain.record_facts import Moved
from crossfill.kinds.evm.config import ChainConfig
from crossfill.kinds.evm.receipt_outcomes import fee_paid
from crossfill.kinds.evm.runtime import ChainRuntime
from crossfill.kinds.evm.txmanager import TxManager
from crossfill.loops import Wakeups, run_every, run_until_woken
from crossfill.quoting.prices import value_on_chain
from crossfill.store import requests
from crossfill.store.tables import RequestTransaction, SentTransaction


# eq=False: a worker equals only itself and stays hashable, as a plain class does.
@dataclass(eq=False)
class JournalledWorker:
    """The chain it works on, the store's sessions, the transaction manager that journals,
    signs and sends for its key (the solver's or a gas sponsor's, under that key's signer
    lease), the clock, and how long it waits between ticks."""

    # What the worker does, as its task's name says it (`solver`, `refunder`, ...).
    job: ClassVar[str]
    # The commit signal that wakes its loop as soon as its work is stored
    # (`store.commit_signals`); None: it polls only.
    woken_by: ClassVar[Wakeups | None] = None
    chain: ChainRuntime
    sessions: async_sessionmaker[AsyncSession]
    txmanager: TxManager
    _: KW_ONLY
    now: Callable[[], datetime]
    interval_seconds: float

    @property
    def config(self) -> ChainConfig:
        return self.chain.config

    @property
    def name(self) -> str:
        """The worker's task: `<job>-<chain id>`."""
        return f"{self.job}-{self.config.id}"

    async def run(self) -> None:
        """The worker's loop, until cancelled: a tick an interval, or sooner when its signal
        fires, and longer waits while its ticks find nothing."""
        if self.woken_by is None:
            await run_every(self.name, self.tick, self.interval_seconds, stretch_when_quiet=True)
            return
        await run_until_woken(
            self.name, self.tick, self.woken_by, self.interval_seconds, stretch_when_quiet=True
        )

    async def tick(self) -> None:
        """One pass over the worker's due work."""
        raise NotImplementedError

    async def gas_for(self, to: str, data: bytes, value: int = 0) -> int:
        """The gas the key's call of `to` (`data`, `value`) takes, as the chain estimates it:
        `Reverted` when the contract refuses it, another ChainError when the node fails."""
        call = {
            "from": self.txmanager.account.address,
            "to": to_checksum_address(to),
            "data": calldata.hex_data(data),
            "value": value,
        }
        return await self.chain.client.estimate_gas(call)

    async def send_estimated(
        self,
        to: str,
        data: bytes,
        gas: int,
        *,
        value: int = 0,
        purpose: str,
        request_id: str | None,
    ) -> SentTransaction:
        """The key's call of `to`, journalled and sent with headroom over its estimated `gas`."""
        return await self.txmanager.send(
            to=to, data=data, value=value, gas_limit=with_gas_headroom(gas), purpose=purpose,
            request_id=request_id,
        )  # fmt: skip

    def valued(self, currency: str, amount: int, now: datetime) -> Moved:
        """`amount` of `currency` moved on the chain, valued in micro-USD at the prices quotes
        use at `now`."""
        now_seconds = int(now.timestamp())
        usd = value_on_chain(self.config, self.chain.state, currency, amount, now_seconds)
        return Moved(currency, amount, usd)

    async def record_sent(
        self,
        session: AsyncSession,
        request_id: str,
        *,
        kind: str,
        tx_hash: str,
        now: datetime,
        keep_mined: bool = False,
        known: list[RequestTransaction] | None = None,
    ) -> None:
        """`tx_hash`, sent, on its request's record as its `kind` transaction: pending (unless
        `keep_mined` and already recorded mined). `known`: as `requests.record_transaction`'s."""
        await requests.record_transaction(
            session, request_id, kind=kind, chain_id=self.config.id, tx_hash=tx_hash,
            status="pending", now=now, keep_mined=keep_mined, known=known,
        )  # fmt: skip

    async def record_mined(
        self,
        session: AsyncSession,
        request_id: str,
        *,
        kind: str,
        tx_hash: str,
        receipt: dict[str, Any],
        now: datetime,
        timestamp: int | None,
        moved: Moved | None = None,
        priced: bool = True,
        known: list[RequestTransaction] | None = None,
    ) -> None:
        """`tx_hash`, mined, on its request's record as its `kind` transaction: succeeded or
        reverted as its receipt says, in its block, with the fee it paid (and, `priced`, that
        fee's value) and what it `moved`. `known`: as `requests.record_transaction`'s."""
        fee = fee_paid(receipt)
        gas = self.valued(self.config.native_currency.address, fee, now)
        succeeded = receipt["status"] == 1
        await requests.record_transaction(
            session, request_id, kind=kind, chain_id=self.config.id, tx_hash=tx_hash,
            status="success" if succeeded else "failure", now=now,
            block_number=int(receipt["blockNumber"]), fee=fee,
            fee_usd_micros=gas.usd_micros if priced else None, timestamp=timestamp, moved=moved,
            known=known,
        )  # fmt: skip
