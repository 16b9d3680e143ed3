"""Chain follower: keeps a chain's ChainState (head, fees, solver balances, market) fresh and
tells the workers about each new head.

Heads are pushed by the node when a websocket is configured (`eth_subscribe`): each pushed head
is announced at once and followed by one poll (after the indexers' scans of it, see `update`).
Without a websocket, or while it is down (it is subscribed again with backoff), the follower
polls every `interval_seconds`; it also polls whenever no head was pushed for that long, so a
silent socket costs no more than polling.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import structlog

from crossfill.domain.backoff import Backoff
from crossfill.errors import ChainError
from crossfill.first_on_loop import HOLD_SECONDS, fill_path
from crossfill.kinds.evm.client import BlockHead
from crossfill.kinds.evm.config import ChainConfig
from crossfill.kinds.evm.market import market_reads, market_snapshot
from crossfill.kinds.evm.port import EvmPort, HeadStream
from crossfill.kinds.evm.state import ChainState
from crossfill.metrics import Metrics
from crossfill.types import NATIVE_EVM_ADDRESS

log = structlog.get_logger(__name__)

HeadListener = Callable[[BlockHead], None]


def _loop_time() -> float:
    """What polls are scheduled by (the injected clock is the state's, and tests pin it)."""
    return asyncio.get_running_loop().time()


class ChainFollower:
    def __init__(
        self,
        client: EvmPort,
        state: ChainState,
        *,
        config: ChainConfig,
        solver: str,
        tokens: tuple[str, ...],
        interval_seconds: float,
        clock: Callable[[], float],
        metrics: Metrics,
        heads: HeadStream | None = None,
        resubscribe: Backoff | None = None,
    ) -> None:
        self.client = client
        self.state = state
        self.config = config
        self.solver = solver
        self.tokens = tokens
        self.interval_seconds = interval_seconds
        self.clock = clock
        self.heads = heads
        self._resubscribe = resubscribe or Backoff()
        self._balance_gauge = metrics.solver_balance
        self._listeners: list[HeadListener] = []
        self._announced: BlockHead | None = None
        self._polled_at: float | None = None
        # True while a head subscription is open (False: polling only).
        self.subscribed = False

    def on_new_head(self, listener: HeadListener) -> Callable[[], None]:
        """Call `listener` with every new head (pushed or polled); returns its removal."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _announce(self, head: BlockHead) -> None:
        """Each head once; an older head than the last announced one (a node behind) is not
        news."""
        last = self._announced
        if last is not None and (head.number < last.number or head.hash == last.hash):
            return
        self._announced = head
        for listener in tuple(self._listeners):
            listener(head)

    async def update(self) -> None:
        """One poll, one RPC batch; a failure is recorded, never raised, so the loop goes on.
        It waits for the fill path's work under way (`first_on_loop`; a pushed head's poll, for
        that head's scans), a bounded time: its round trip and its answer's processing kept
        out of the fills' way, the state quotes read a head behind for that long at most."""
        await fill_path().after(at_most=HOLD_SECONDS)
        self._polled_at = _loop_time()
        try:
            poll = await self.client.poll(self.solver, self.tokens, market_reads(self.config))
        except ChainError as exc:
            if self.state.last_error is None:
                log.warning("chain head poll failed", chain_id=self.state.chain_id, error=str(exc))
            self.state.record_error(str(exc))
            return
        except Exception as exc:  # an answer nothing here expected: recorded like a failure
            if self.state.last_error is None:
                log.exception("chain head poll crashed", chain_id=self.state.chain_id)
            self.state.record_error(f"unexpected answer: {type(exc).__name__}: {exc}")
            return
        balances = dict(zip((t.lower() for t in self.tokens), poll.token_balances, strict=True))
        balances[NATIVE_EVM_ADDRESS] = poll.native_balance
        self.state.priority_fee_per_gas = poll.priority_fee_per_gas
        self.state.solver_balances = balances
        self._export_balances(balances)
        self.state.market = market_snapshot(self.config, poll.reads)
        self.state.record_head(poll.head, self.clock())
        self._announce(poll.head)

    def _export_balances(self, balances: dict[str, int]) -> None:
        for currency in self.config.currencies:
            amount = balances.get(currency.address.lower())
            if amount is not None:
                # A float in whole units: what a dashboard shows and an alert compares.
                whole_units = amount / 10**currency.decimals
                self._balance_gauge.labels(self.config.id, currency.symbol).set(whole_units)

    async def run(self) -> None:
        """Everything after the first poll (see Runtime.start_followers)."""
        async with asyncio.TaskGroup() as tasks:
            tasks.create_task(self._poll())
            if self.heads is not None:
                tasks.create_task(self._follow_pushed_heads(self.heads))

    async def _poll(self) -> None:
        """Poll whenever nothing was polled for `interval_seconds`."""
        while True:
            polled_at = self._polled_at if self._polled_at is not None else _loop_time()
            await asyncio.sleep(max(0.0, polled_at + self.interval_seconds - _loop_time()))
            if self._polled_at is None or _loop_time() - self._polled_at >= self.interval_seconds:
                await self.update()

    async def _follow_pushed_heads(self, heads: HeadStream) -> None:
        while True:
            try:
                async for head in heads.new_heads():
                    if not self.subscribed:
                        self.subscribed = True
                        self._resubscribe.succeeded()
                        log.info("chain heads subscribed", chain_id=self.config.id)
                    self._announce(head)
                    await self.update()
            except ChainError as exc:
                delay = self._resubscribe.failed()
                if self._resubscribe.worth_logging:
                    log.warning(
                        "chain head subscription lost; polling",
                        chain_id=self.config.id,
                        error=str(exc),
                        retry_in_seconds=round(delay, 2),
                    )
                self.subscribed = False
                await asyncio.sleep(delay)
