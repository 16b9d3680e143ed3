"""The main deployment's solver moves its own inventory from ORIGIN to DESTINATION through the
peer deployment (a second, independent Crossfill on the same anvil chains), with
`IntentsApiBridge`: quoted and followed over the peer's public HTTP interface, the deposit
signed by the solver's key and journalled by the origin's transaction manager.

The peer fills each move from its own inventory: the solver's balance on the destination rises
by exactly the quoted output and the move ends `Arrived`. A crash between the journal and the
broadcast sends once; an amount beyond the peer's inventory is the peer's typed refusal."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select

from crossfill.config import RebalancingSettings
from crossfill.devnet import accounts
from crossfill.devnet.seed import ETHER, USDC_UNIT
from crossfill.kinds.evm.runtime import ChainRuntime, evm_chain_runtime
from crossfill.kinds.evm.txmanager import TxManager
from crossfill.metrics import Metrics
from crossfill.store.tables import SentTransaction
from crossfill.treasury.bridge import (
    Arrived,
    BridgeQuote,
    Move,
    MoveStatus,
    Refused,
    SentMove,
)
from crossfill.treasury.intents_api_bridge import PURPOSE, IntentsApiBridge
from crossfill_client import AsyncClient
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, NATIVE, ORIGIN, balance, usdc
from tests.support.database import sessions_of, sqlite_url
from tests.support.peers import RunningPeer, running_peer
from tests.support.service import service_settings

SOLVER = accounts.solver().address
SETTINGS = RebalancingSettings(bridge_url="http://127.0.0.1:1", bridge_backoff_seconds=0.2)


@pytest.fixture(scope="module")
def peer(devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningPeer]:
    with running_peer(devnet, tmp_path_factory.mktemp("peer")) as running:
        yield running


class Killed(BaseException):
    """The process dying between the journal's commit and the broadcast."""


@dataclass
class SolverSide:
    """What the main deployment's rebalancer would hold: the origin chain followed once, the
    solver key's transaction manager there, on the main deployment's database."""

    chain: ChainRuntime
    txmanager: TxManager
    bridge: IntentsApiBridge


@asynccontextmanager
async def solver_side(
    devnet: RunningDevnet, peer: RunningPeer, home: Path
) -> AsyncIterator[SolverSide]:
    """A fresh process's view, on the database in `home`: its own chain client, transaction
    manager (the same signer lease holder each time: a restart), and client of the peer."""
    settings = service_settings(home, devnet.deployment_path)
    database = sqlite_url(home / "main.db")
    config = devnet.deployment.chain(ORIGIN)
    assert config is not None
    chain = evm_chain_runtime(config, settings, SOLVER, time.monotonic, Metrics())
    await chain.follower.update()
    async with sessions_of(database, migrated=True) as sessions:
        txmanager = TxManager(
            chain.client,
            chain.state,
            accounts.solver(),
            sessions,
            now=lambda: datetime.now(UTC),
            holder="rebalancer",
        )
        client = AsyncClient(peer.base_url, timeout=10)
        bridge = IntentsApiBridge(client, {ORIGIN: txmanager}, SOLVER, SETTINGS)
        try:
            yield SolverSide(chain, txmanager, bridge)
        finally:
            await bridge.aclose()
            await chain.client.close()


async def arrived(bridge: IntentsApiBridge, sent: SentMove, peer: RunningPeer) -> MoveStatus:
    """The move's status once it is no longer pending (a minute at most)."""
    deadline = time.monotonic() + 60
    while True:
        status = await bridge.status(sent)
        if isinstance(status, Arrived) or time.monotonic() > deadline:
            assert isinstance(status, Arrived), f"{status}\n{peer.log_tail()}"
            return status
        await asyncio.sleep(0.3)


def destination_balance(devnet: RunningDevnet, currency: str) -> Callable[[], int]:
    return lambda: balance(devnet, DESTINATION, currency, SOLVER)


async def move_through_peer(
    devnet: RunningDevnet, peer: RunningPeer, home: Path, move: Move
) -> tuple[BridgeQuote, SentMove]:
    before = destination_balance(devnet, move.currency_out)()
    async with solver_side(devnet, peer, home) as side:
        started = time.monotonic()
        quote = await side.bridge.quote(move)
        assert isinstance(quote, BridgeQuote), quote
        assert 0 < quote.amount_out <= move.amount
        sent = await side.bridge.send(quote)
        assert isinstance(sent, SentMove), sent
        status = await arrived(side.bridge, sent, peer)
        # What docs/treasury.md reports (`pytest -s` shows it).
        print(
            f"moved {move.amount} -> {quote.amount_out} in {len(sent.tx_hashes)} transaction(s):"
            f" quote to arrived {time.monotonic() - started:.2f} s"
        )
    assert isinstance(status, Arrived) and status.amount == quote.amount_out
    assert destination_balance(devnet, move.currency_out)() - before == quote.amount_out
    return quote, sent


async def test_moves_ether_through_the_peer(
    devnet: RunningDevnet, peer: RunningPeer, tmp_path: Path
) -> None:
    move = Move(ORIGIN, DESTINATION, NATIVE, NATIVE, ETHER // 4)
    quote, sent = await move_through_peer(devnet, peer, tmp_path, move)
    assert len(quote.calls) == len(sent.tx_hashes) == 1


async def test_moves_usdc_through_the_peer_approval_first(
    devnet: RunningDevnet, peer: RunningPeer, tmp_path: Path
) -> None:
    """A token move is two transactions (the approval of the peer's Depository, then the
    deposit): the deposit is signed once the approval is mined."""
    tokens = usdc(devnet, ORIGIN), usdc(devnet, DESTINATION)
    move = Move(ORIGIN, DESTINATION, *tokens, 500 * USDC_UNIT)
    quote, sent = await move_through_peer(devnet, peer, tmp_path, move)
    assert len(quote.calls) == len(sent.tx_hashes) == 2


async def test_a_crash_between_journal_and_broadcast_sends_once(
    devnet: RunningDevnet, peer: RunningPeer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first process journals the deposit and dies before any node has it; the next
    sends the same quote again: the journalled transaction is broadcast, nothing is signed
    again, and the solver's nonce on the origin moves by one."""
    database = sqlite_url(tmp_path / "main.db")
    move = Move(ORIGIN, DESTINATION, NATIVE, NATIVE, ETHER // 5)
    before = destination_balance(devnet, NATIVE)()
    async with solver_side(devnet, peer, tmp_path) as side:
        nonce_before = await side.chain.client.mined_nonce(SOLVER)
        quote = await side.bridge.quote(move)
        assert isinstance(quote, BridgeQuote), quote

        async def dies(_raw: bytes) -> str:
            raise Killed

        monkeypatch.setattr(side.chain.client, "send_raw", dies)
        with pytest.raises(Killed):
            await side.bridge.send(quote)
    async with sessions_of(database) as sessions, sessions() as session:
        (journalled,) = (await session.scalars(select(SentTransaction))).all()
    assert journalled.status == "signed" and journalled.purpose.startswith(PURPOSE)
    monkeypatch.undo()
    async with solver_side(devnet, peer, tmp_path) as side:
        sent = await side.bridge.send(quote)
        assert isinstance(sent, SentMove), sent
        assert sent.tx_hashes == (journalled.tx_hash,)
        again = await side.bridge.send(quote)  # a second call resumes: nothing new is signed
        assert again == sent
        status = await arrived(side.bridge, sent, peer)
        assert await side.chain.client.mined_nonce(SOLVER) == nonce_before + 1
    async with sessions_of(database) as sessions, sessions() as session:
        rows = (await session.scalars(select(SentTransaction))).all()
    assert [row.tx_hash for row in rows] == [journalled.tx_hash]
    assert isinstance(status, Arrived)
    assert destination_balance(devnet, NATIVE)() - before == quote.amount_out


async def test_a_move_beyond_the_peers_inventory_is_its_typed_refusal(
    devnet: RunningDevnet, peer: RunningPeer, tmp_path: Path
) -> None:
    """The peer's solver holds 1,000 ETH on the destination; 5,000 is refused by the peer, in
    its own words, and nothing is sent."""
    async with solver_side(devnet, peer, tmp_path) as side:
        nonce_before = await side.chain.client.pending_nonce(SOLVER)
        refused = await side.bridge.quote(Move(ORIGIN, DESTINATION, NATIVE, NATIVE, 5_000 * ETHER))
        assert await side.chain.client.pending_nonce(SOLVER) == nonce_before
    assert isinstance(refused, Refused), refused
    assert refused.by == "bridge"
    assert refused.code == "INSUFFICIENT_LIQUIDITY", refused
