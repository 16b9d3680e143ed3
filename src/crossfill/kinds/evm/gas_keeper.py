"""Gas keeper, one per EVM chain: every key the service sends from there kept above its
minimum gas balance.

The keys are the solver's (fills, refunds, repayments, sponsor pulls, permit deposits,
app-fee payouts and deposit-address sweeps all send with it) and each gasless sponsor's
(`POST /execute`); the allocator signs payouts but never sends. At each tick the keeper reads
every key's balance at the chain's head in one call and asks `domain.key_gas` what to do: a
key below its minimum (`ChainConfig.key_gas`) is topped up to its target by a plain transfer
from the solver, out of what the solver can spare (its key's balance less what its
transactions in flight may take, less what waiting fills lack, less its own minimum). What
cannot be topped up (the solver's own key, or a solver with nothing to spare) is shown: on the
chain's state (`/readyz`, `/chains`) and as `crossfill_key_gas_low`.

A top-up is journalled like any transaction of the solver key, under the purpose
`gas-top-up:<chain id>:<key address>`, so a restart resumes it rather than sending another:
while the key's latest top-up is in flight, or mined after the block its balance was read at,
the key waits. The solver key's signer lease is held from before that journal read until the
top-up is journalled (each journal write is fenced by the lease), so no other process can
journal one in between. Every chain failure ends the tick and is retried with the loop's
backoff; only the key's own refusal of the transfer (a contract that reverts it) stops a
top-up, and is shown low.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field

import structlog

from crossfill.domain.key_gas import (
    REFUSED,
    SOLVER,
    SOLVER_LOW,
    GasFloor,
    KeyGas,
    LowKey,
    SponsorWaiting,
    TopUp,
    plan_gas,
    solver_spare,
)
from crossfill.errors import Reverted, SignerBusy
from crossfill.kinds.evm.journalled_worker import JournalledWorker
from crossfill.kinds.evm.txmanager import InFlight, Mined
from crossfill.loops import run_every
from crossfill.metrics import Metrics

log = structlog.get_logger(__name__)
PURPOSE = "gas-top-up"
TRANSFER_GAS = 21_000


@dataclass(frozen=True)
class SendingKey:
    """A key the service sends from: its role (`solver`, `gasless-sponsor-N`) and address."""

    role: str
    address: str


def _needed(waiting: Mapping[str, SponsorWaiting], address: str) -> int:
    """What a sponsor's gasless executions waiting for funds need it to hold (0: none wait)."""
    found = waiting.get(address)
    return 0 if found is None else found.needed


def purpose_of(chain_id: int, address: str) -> str:
    """The journal purpose of a key's top-ups on a chain (its latest is its latest attempt)."""
    return f"{PURPOSE}:{chain_id}:{address.lower()}"


@dataclass(eq=False)
class GasKeeper(JournalledWorker):
    job = "gas-keeper"
    keys: tuple[SendingKey, ...]
    metrics: Metrics
    _: KW_ONLY
    # purpose -> (the id of its latest journal row, the block that top-up was seen mined in):
    # its receipt is not read again while nothing newer is journalled for it
    _mined_in: dict[str, tuple[int, int]] = field(default_factory=dict)
    # keys whose address refused a transfer, by address
    _refusing: set[str] = field(default_factory=set)

    async def run(self) -> None:
        interval = max(self.interval_seconds, self.config.key_gas.check_interval_seconds)
        await run_every(self.name, self.tick, interval)

    async def tick(self) -> None:
        state = self.chain.state
        head, available = state.head, self.txmanager.available()
        if head is None or available is None:
            return  # nothing read yet: nothing to judge
        fee, _tip = state.offered_fees()
        floor = self.config.key_gas.floor(fee)
        balances = await self.chain.client.native_balances(
            [key.address for key in self.keys], head.number
        )
        waiting = state.sponsor_waiting
        keys = [
            KeyGas(key.role, address, balance, _needed(waiting, address))
            for key, balance in zip(self.keys, balances, strict=True)
            for address in (key.address.lower(),)
        ]
        below = [
            key for key in keys if key.balance < key.floor(floor).minimum and key.role != SOLVER
        ]
        if below and self.config.key_gas.top_up:
            # Held from before the journal is read until each top-up is journalled (every
            # journal write is fenced by the lease's token): no other process can journal a
            # top-up in between. Another process signing: top-ups are left to it.
            try:
                await self.txmanager.hold_signer()
            except SignerBusy:
                self._publish(keys, floor, self._solver_low(keys, floor))
                raise
        # Every key's latest top-up is followed until mined (its journal row settled, what it
        # may take from the solver released), whatever the key holds now.
        pending = {
            key.role
            for key in keys
            if key.role != SOLVER and await self._top_up_pending(key, head.number)
        }
        native = self.config.native_currency.address.lower()
        lack = state.solver_shortfall.get(native, 0)
        plan = plan_gas(
            [key for key in keys if key.role not in pending],
            floor,
            spare=solver_spare(
                available=available,
                committed=state.solver_committed.get(native, 0),
                solver_minimum=floor.minimum,
                waiting_fills_lack=lack,
            ),
            transfer_cost=TRANSFER_GAS * fee,
            top_ups_on=self.config.key_gas.top_up,
            refusing=self._refusing,
        )
        low = list(plan.low)
        self._publish(keys, floor, low)  # what cannot be topped up, before anything is sent
        for top_up in plan.top_ups:
            if not await self._send(top_up):
                low.append(LowKey(top_up.key, top_up.key.floor(floor).minimum, REFUSED))
                self._publish(keys, floor, low)

    @staticmethod
    def _solver_low(keys: list[KeyGas], floor: GasFloor) -> list[LowKey]:
        return [
            LowKey(key, floor.minimum, SOLVER_LOW)
            for key in keys
            if key.role == SOLVER and key.balance < floor.minimum
        ]

    async def _top_up_pending(self, key: KeyGas, block: int) -> bool:
        """Whether the key's latest top-up is in flight, or mined after `block` (its balance
        as read there does not show it yet)."""
        purpose = purpose_of(self.config.id, key.address)
        latest = await self.txmanager.for_request(None, purpose)
        if latest is None:
            return False
        known = self._mined_in.get(purpose)
        if known is not None and known[0] == latest.id:
            return known[1] > block  # seen mined, and nothing journalled since
        attempt = await self.txmanager.attempt(None, purpose)
        if isinstance(attempt, InFlight):
            return True
        if not isinstance(attempt, Mined):
            return False
        mined_in = int(attempt.receipt["blockNumber"])
        self._mined_in[purpose] = (latest.id, mined_in)
        if not attempt.succeeded:
            log.error(
                "a gas top-up reverted",
                chain_id=self.config.id,
                key=key.role,
                tx_hash=attempt.row.tx_hash,
            )
        return mined_in > block

    async def _send(self, top_up: TopUp) -> bool:
        """Journal and send the top-up; False when the key's address reverts the transfer."""
        key = top_up.key
        try:
            gas = await self.gas_for(key.address, b"", top_up.amount)
        except Reverted as revert:
            self._refusing.add(key.address)
            log.error(
                "a key's address refuses its gas top-up",
                chain_id=self.config.id,
                key=key.role,
                reason=revert.reason.message,
            )
            return False
        purpose = purpose_of(self.config.id, key.address)
        row = await self.send_estimated(
            key.address, b"", gas, value=top_up.amount, purpose=purpose, request_id=None
        )
        chain_id = str(self.config.id)
        self.metrics.gas_top_ups.labels(chain_id, key.role).inc()
        self.metrics.gas_top_up_wei.labels(chain_id, key.role).inc(top_up.amount)
        log.info(
            "a key topped up with gas from the solver",
            chain_id=self.config.id,
            key=key.role,
            address=key.address,
            balance=key.balance,
            amount=top_up.amount,
            tx_hash=row.tx_hash,
        )
        return True

    def _publish(self, keys: list[KeyGas], floor: GasFloor, low: list[LowKey]) -> None:
        """The keys left low on the chain's state; every key's balance, minimum and whether it
        is low in the metrics (whole units)."""
        self.chain.state.low_on_gas = tuple(sorted(low, key=lambda entry: entry.key.role))
        low_roles = {entry.key.role for entry in low}
        unit = 10**self.config.native_currency.decimals
        for key in keys:
            self.metrics.key_gas(
                self.config.id, key.role, balance=key.balance / unit,
                minimum=key.floor(floor).minimum / unit, low=key.role in low_roles,
            )  # fmt: skip
