"""The SVM indexer on an in-memory chain: every deposit of a token the chain does not serve is
recorded and kept, the ones that name only the vault's token account for it included."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from solders.keypair import Keypair
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.kinds.svm import programs
from crossfill.kinds.svm.config import SvmChainConfig
from crossfill.kinds.svm.follower import SvmChainState, SvmFollower
from crossfill.kinds.svm.indexer import SvmIndexer
from crossfill.kinds.svm.payer import SvmPayer
from crossfill.kinds.svm.refunder import SvmRefunder
from crossfill.kinds.svm.runtime import SvmChainRuntime
from crossfill.kinds.svm.vault_accounts import whole_history
from crossfill.kinds.timed_inventory import TimedInventory
from crossfill.store import deposits
from crossfill.store.tables import Deposit
from tests.support.database import sessions_of, sqlite_url
from tests.unit.fake_svm import FakeSvm
from tests.unit.worker_world import Clock

VAULT, USER = Keypair().pubkey(), Keypair().pubkey()
USDC, OTHER = Keypair().pubkey(), Keypair().pubkey()  # served; not served
MEMO = programs.memo("0x" + "7a" * 32)
CONFIG = SvmChainConfig.model_validate(
    {
        "name": "svm", "display_name": "SVM", "http_rpc_url": "http://127.0.0.1:8899",
        "solver": {"address": str(VAULT), "key": "devnet-svm:solver"},
        "native_currency": {"address": "1" * 32, "symbol": "SOL", "name": "Solana",
                            "decimals": 9, "usd_price": "150"},
        "token_currencies": [{"address": str(USDC), "symbol": "USDC", "name": "USD Coin",
                              "decimals": 6, "usd_price": "1"}],
    }
)  # fmt: skip


@pytest.fixture
async def sessions(tmp_path: Path) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    async with sessions_of(sqlite_url(tmp_path / "indexer.db"), migrated=True) as sessions:
        yield sessions


class World:
    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self.sessions, self.clock, self.chain = sessions, Clock(), FakeSvm()
        state = SvmChainState(chain_id=CONFIG.id, lag_threshold_seconds=None, started_at=0.0)
        follower = SvmFollower(
            self.chain, state, config=CONFIG, interval_seconds=1, clock=lambda: 0.0
        )
        inventory = TimedInventory((), lambda: 0.0, key=str)
        self.runtime = SvmChainRuntime(CONFIG, self.chain, state, follower, inventory)
        self.indexer = self.new_indexer()
        payer = SvmPayer(self.chain, Keypair(), sessions, now=self.clock)
        self.refunder = SvmRefunder(
            self.runtime, payer, sessions=sessions, now=self.clock, interval_seconds=1
        )

    def new_indexer(self) -> SvmIndexer:
        """An indexer as a process starting on this database has it."""
        return SvmIndexer(self.runtime, sessions=self.sessions, now=self.clock, interval_seconds=1)

    def pay_other(self, amount: int, *, creating_the_account: bool = False) -> str:
        """`amount` of the unserved mint paid into the vault's account for it."""
        create = [programs.create_token_account(USER, VAULT, OTHER)] if creating_the_account else []
        pay = programs.transfer_token(USER, VAULT, OTHER, amount, 0)
        signature = self.chain.land([*create, pay, MEMO], USER)
        if creating_the_account:
            self.chain.give_tokens(VAULT, OTHER)
        return signature

    async def kept(self) -> list[tuple[str, str, str | None, str | None]]:
        async with self.sessions() as session:
            rows = await session.scalars(select(Deposit).order_by(Deposit.id))
            return [
                (row.tx_hash, row.amount, row.refund_status, row.refund_fail_reason) for row in rows
            ]


async def test_a_payment_into_an_unserved_mints_existing_vault_account_is_recorded_and_kept(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    """Before: the second payment named neither the vault nor a served mint's account, and
    was never listed."""
    world = World(sessions)
    # Accounts the vault owns that hold no deposit: a served mint's, one not associated.
    world.chain.give_tokens(VAULT, USDC)
    world.chain.give_tokens(VAULT, Keypair().pubkey(), account=Keypair().pubkey())
    await world.indexer.tick()
    first = world.pay_other(100, creating_the_account=True)
    await world.indexer.tick()  # read through the vault's listing
    second = world.pay_other(200)
    await world.indexer.tick()  # the account is found and read from its start
    await world.refunder.tick()
    kept = ("skipped", deposits.UNSERVED_CURRENCY)
    assert await world.kept() == [(first, "100", *kept), (second, "200", *kept)]
    assert world.indexer.unserved.followed == [programs.token_account(VAULT, OTHER)]
    assert world.chain.listing_round_trips == 3  # one batch a tick, the new account in it

    # Followed from its durable cursor after a restart, found again at the indexer's start.
    world.indexer = world.new_indexer()
    third = world.pay_other(300)
    await world.indexer.tick()
    await world.refunder.tick()
    assert [row[:2] for row in await world.kept()] == [
        (first, "100"),
        (second, "200"),
        (third, "300"),
    ]


async def test_failing_to_list_the_vaults_token_accounts_stops_no_other_listing(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    world = World(sessions)
    world.chain.token_accounts_unreachable = True
    await world.indexer.tick()
    first = world.pay_other(100, creating_the_account=True)
    second = world.pay_other(200)
    await world.indexer.tick()  # the vault's listing goes on: the first payment is read
    assert [row[0] for row in await world.kept()] == [first]

    world.chain.token_accounts_unreachable = False
    await world.indexer.tick()  # not yet: the failed read waits out its backoff
    assert [row[0] for row in await world.kept()] == [first]
    world.clock.advance(timedelta(minutes=1))
    await world.indexer.tick()
    assert [row[0] for row in await world.kept()] == [first, second]


async def test_the_vaults_token_accounts_are_looked_for_again_each_minute(
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    """An account made in a transaction that paid nothing into it (so no deposit named its
    mint) is found at the next look, and read from its start."""
    world = World(sessions)
    await world.indexer.tick()
    world.chain.land([programs.create_token_account(USER, VAULT, OTHER)], USER)
    world.chain.give_tokens(VAULT, OTHER)
    await world.indexer.tick()
    paid = world.pay_other(100)
    await world.indexer.tick()
    assert await world.kept() == []
    world.clock.advance(timedelta(minutes=1))
    await world.indexer.tick()
    assert [row[0] for row in await world.kept()] == [paid]


async def test_a_newly_followed_accounts_history_is_read_past_its_first_page() -> None:
    chain, account = FakeSvm(), programs.token_account(VAULT, OTHER)
    landed = [
        chain.land([programs.transfer_token(USER, VAULT, OTHER, 1, 0)], USER) for _ in range(5)
    ]
    first_page = await chain.signatures_for(account, until=None, limit=2)
    listed = await whole_history(chain, account, first_page, limit=2)
    assert [entry["signature"] for entry in listed] == landed[::-1]
