"""The quote path's per-head cache of users' balances and allowances (chains/positions.py),
and the rule that a stale allowance never drops a needed approval step."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

from crossfill.app.quotes import _user_position
from crossfill.kinds.evm.client import BlockHead
from crossfill.kinds.evm.port import EvmPort
from crossfill.kinds.evm.positions import UserPositions
from crossfill.kinds.evm.state import ChainState
from crossfill.quoting.engine import Quote
from crossfill.quoting.steps import steps
from crossfill.runtime import Runtime
from crossfill.types import ChainId
from tests.support import quote_fixtures as fx

TOKEN, HOLDER, SPENDER = "0x" + "11" * 20, "0x" + "ab" * 20, "0x" + "44" * 20


@dataclass
class Wallet:
    """The node's view of one user's wallet; counts the reads that reached it."""

    balance: int = 5 * 10**6
    allowance: int | None = 0
    reads: int = 0
    held: list[asyncio.Event] = field(default_factory=list)

    async def balance_and_allowance(
        self, currency: str, holder: str, spender: str
    ) -> tuple[int, int | None]:
        self.reads += 1
        if self.held:
            await self.held.pop(0).wait()
        return self.balance, self.allowance


def _state(number: int = 100) -> ChainState:
    state = ChainState(chain_id=ChainId(fx.CHAINS[0]), lag_threshold_seconds=None, started_at=0)
    state.record_head(BlockHead(number, 0, f"0x{number:064x}", 1), 0)
    return state


def _positions(wallet: Wallet, state: ChainState, **options: Any) -> UserPositions:
    return UserPositions(cast(EvmPort, wallet), state, **options)


def test_a_second_read_in_the_same_head_is_answered_from_the_cache() -> None:
    wallet = Wallet()
    positions = _positions(wallet, _state())

    async def scenario() -> None:
        first = await positions.read(TOKEN, HOLDER, SPENDER)
        wallet.balance = 1
        second = await positions.read(TOKEN, HOLDER.upper().replace("0X", "0x"), SPENDER)
        assert (first.cached, second.cached) == (False, True)
        assert second.balance == 5 * 10**6
        assert wallet.reads == 1

    asyncio.run(scenario())


def test_a_new_head_or_a_fresh_read_goes_to_the_node() -> None:
    wallet = Wallet()
    state = _state(100)
    positions = _positions(wallet, state)

    async def scenario() -> None:
        await positions.read(TOKEN, HOLDER, SPENDER)
        wallet.balance = 7
        assert (await positions.read(TOKEN, HOLDER, SPENDER, fresh=True)).balance == 7
        wallet.balance = 8
        state.record_head(BlockHead(101, 0, "0x" + "65" * 32, 1), 1)
        after_head = await positions.read(TOKEN, HOLDER, SPENDER)
        assert (after_head.balance, after_head.cached) == (8, False)
        assert wallet.reads == 3

    asyncio.run(scenario())


def test_a_read_that_straddles_a_new_head_is_not_kept() -> None:
    wallet = Wallet()
    state = _state(100)
    positions = _positions(wallet, state)

    async def scenario() -> None:
        released = asyncio.Event()
        wallet.held.append(released)
        pending = asyncio.create_task(positions.read(TOKEN, HOLDER, SPENDER))
        await asyncio.sleep(0)
        state.record_head(BlockHead(101, 0, "0x" + "65" * 32, 1), 1)
        await positions.read(HOLDER, HOLDER, SPENDER)  # another key, read at the new head
        released.set()
        await pending
        assert not (await positions.read(TOKEN, HOLDER, SPENDER)).cached

    asyncio.run(scenario())


def test_no_head_yet_means_no_cache_and_the_size_is_bounded() -> None:
    wallet = Wallet()
    headless = ChainState(chain_id=ChainId(1), lag_threshold_seconds=None, started_at=0)

    async def scenario() -> None:
        positions = _positions(wallet, headless)
        await positions.read(TOKEN, HOLDER, SPENDER)
        assert not (await positions.read(TOKEN, HOLDER, SPENDER)).cached
        bounded = _positions(wallet, _state(), max_entries=2)
        for holder in ("0x01", "0x02", "0x03"):
            await bounded.read(TOKEN, holder, SPENDER)
        assert (await bounded.read(TOKEN, "0x03", SPENDER)).cached
        assert not (await bounded.read(TOKEN, "0x01", SPENDER)).cached

    asyncio.run(scenario())


def _usdc_swap() -> Quote:
    """A same-chain USDC -> ETH swap: the user's transaction spends an allowance."""
    return fx.quote(
        fx.body(
            originCurrency=fx.USDC,
            destinationCurrency="0x0000000000000000000000000000000000000000",
            destinationChainId=fx.CHAINS[0],
            amount=str(100 * 10**6),
        )
    )


def _runtime(positions: UserPositions) -> Runtime:
    chain = SimpleNamespace(positions=positions)
    chains = {fx.CHAINS[0]: chain}
    return cast(Runtime, SimpleNamespace(chains_of=lambda chain_type, view: chains))


def test_a_stale_allowance_never_drops_a_needed_approval() -> None:
    quote = _usdc_swap()
    wallet = Wallet(allowance=10**30)
    runtime = _runtime(_positions(wallet, _state()))

    async def scenario() -> None:
        _, allowance = await _user_position(runtime, quote)
        assert [step["id"] for step in steps(quote, allowance=allowance)] == ["swap"]
        wallet.allowance = 0  # spent within this head: the cached allowance is stale
        _, allowance = await _user_position(runtime, quote)
        assert allowance == 0
        assert [step["id"] for step in steps(quote, allowance=allowance)] == ["approve", "swap"]
        assert wallet.reads == 2

    asyncio.run(scenario())


def test_an_allowance_that_keeps_the_approval_is_reused_within_the_head() -> None:
    quote = _usdc_swap()
    wallet = Wallet(allowance=0)
    runtime = _runtime(_positions(wallet, _state()))

    async def scenario() -> None:
        for _ in range(3):
            _, allowance = await _user_position(runtime, quote)
            assert [step["id"] for step in steps(quote, allowance=allowance)] == [
                "approve",
                "swap",
            ]
        assert wallet.reads == 1

    asyncio.run(scenario())
