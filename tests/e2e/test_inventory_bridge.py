"""The main deployment's solver moves its own inventory from ORIGIN to DESTINATION through the
peer deployment (a second, independent Crossfill on the same anvil chains), with
`IntentsApiBridge`: quoted and followed over the peer's public HTTP interface, the deposit
signed by the solver's key and journalled by the origin's transaction manager.

The peer fills each move from its own inventory: the solver's balance on the destination rises
by exactly the quoted output and the move ends `Arrived`. A process SIGKILLed between the
journal and the broadcast is resumed by the next, which sends once; an amount beyond the
peer's inventory is the peer's typed refusal."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest
from sqlalchemy import select

from crossfill.devnet.seed import ETHER, USDC_UNIT
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
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, NATIVE, ORIGIN, balance, usdc
from tests.e2e.inventory_bridging import SOLVER, SolverSide, main_database, solver_side
from tests.support.database import sessions_of
from tests.support.peers import RunningPeer, running_peer


@pytest.fixture(scope="module")
def peer(devnet: RunningDevnet, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningPeer]:
    with running_peer(devnet, tmp_path_factory.mktemp("peer")) as running:
        yield running


def side_of(
    devnet: RunningDevnet, peer: RunningPeer, home: Path
) -> AbstractAsyncContextManager[SolverSide]:
    """The solver's side of a move from ORIGIN, as a fresh process holds it."""
    return solver_side(devnet.deployment, devnet.deployment_path, peer.base_url, home, ORIGIN)


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
    async with side_of(devnet, peer, home) as side:
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


def killed_while_sending(devnet: RunningDevnet, peer: RunningPeer, home: Path) -> BridgeQuote:
    """A process quotes a move of 0.2 ETH and is SIGKILLed as its journalled deposit would be
    broadcast (`tests.e2e.bridge_move_process`); the quote it printed."""
    arguments = [devnet.deployment_path, home, peer.base_url, ORIGIN, DESTINATION, ETHER // 5]
    ended = subprocess.run(
        [sys.executable, "-m", "tests.e2e.bridge_move_process", *map(str, arguments)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parents[2],
    )
    assert ended.returncode == -signal.SIGKILL, ended.stderr[-3000:]
    return BridgeQuote.of_document(json.loads(ended.stdout.splitlines()[-1]))


async def journal(home: Path) -> list[SentTransaction]:
    async with sessions_of(main_database(home)) as sessions, sessions() as session:
        return list(await session.scalars(select(SentTransaction).order_by(SentTransaction.id)))


async def test_a_kill_between_journal_and_broadcast_sends_once(
    devnet: RunningDevnet, peer: RunningPeer, tmp_path: Path
) -> None:
    """The first process journals the deposit and is killed before any node has it; the next
    sends the same quote again: the journalled transaction is broadcast, nothing is signed
    again, and the solver's nonce on the origin moves by one."""
    before = destination_balance(devnet, NATIVE)()
    async with side_of(devnet, peer, tmp_path) as side:
        nonce_before = await side.chain.client.mined_nonce(SOLVER)
    quote = killed_while_sending(devnet, peer, tmp_path)
    (journalled,) = await journal(tmp_path)
    assert journalled.status == "signed" and journalled.purpose.startswith(PURPOSE)
    async with side_of(devnet, peer, tmp_path) as side:
        assert await side.chain.client.pending_nonce(SOLVER) == nonce_before  # never sent
        sent = await side.bridge.send(quote)
        assert isinstance(sent, SentMove), sent
        assert sent.tx_hashes == (journalled.tx_hash,)
        again = await side.bridge.send(quote)  # a second call resumes: nothing new is signed
        assert again == sent
        status = await arrived(side.bridge, sent, peer)
        assert await side.chain.client.mined_nonce(SOLVER) == nonce_before + 1
    assert [row.tx_hash for row in await journal(tmp_path)] == [journalled.tx_hash]
    assert isinstance(status, Arrived)
    assert destination_balance(devnet, NATIVE)() - before == quote.amount_out


async def test_a_move_beyond_the_peers_inventory_is_its_typed_refusal(
    devnet: RunningDevnet, peer: RunningPeer, tmp_path: Path
) -> None:
    """The peer's solver holds 1,000 ETH on the destination; 5,000 is refused by the peer, in
    its own words, and nothing is sent."""
    async with side_of(devnet, peer, tmp_path) as side:
        nonce_before = await side.chain.client.pending_nonce(SOLVER)
        refused = await side.bridge.quote(Move(ORIGIN, DESTINATION, NATIVE, NATIVE, 5_000 * ETHER))
        assert await side.chain.client.pending_nonce(SOLVER) == nonce_before
    assert isinstance(refused, Refused), refused
    assert refused.by == "bridge"
    assert refused.code == "INSUFFICIENT_LIQUIDITY", refused
