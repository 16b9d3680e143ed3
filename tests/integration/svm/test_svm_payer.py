"""The SVM payer against the devnet node: SOL and USDC paid once (the recipient's token
account created), an attempt journalled but never sent re-signed only after it expired,
and kill -9 at random moments still paying every order exactly once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from crossfill.devnet.svm import accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from crossfill.kinds.payment_outcomes import Paid, Pending
from crossfill.kinds.svm import programs
from crossfill.kinds.svm.client import LandedTransaction, SvmClient
from crossfill.kinds.svm.payer import SvmPayer
from crossfill.store.migrate import upgrade
from crossfill.store.tables import SvmPayment
from crossfill.types import ChainId
from tests.integration.svm.pay_loop import order, recipient
from tests.support.database import rows_in, sessions_of, sqlite_url
from tests.support.wallets.svm import rpc

REPO = Path(__file__).parents[3]


@pytest.fixture
async def sessions(tmp_path: Path) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    async with sessions_of(sqlite_url(tmp_path / "payer.db"), migrated=True) as sessions:
        yield sessions


@pytest.fixture
async def client(svm_node: SvmNodeProcess) -> AsyncIterator[SvmClient]:
    svm = SvmClient(ChainId(792703809), svm_node.rpc_url)
    yield svm
    await svm.close()


async def _until_paid(payer: SvmPayer, *args: object) -> Paid[LandedTransaction]:
    for _ in range(100):
        outcome = await payer.pay(*args)  # type: ignore[arg-type]
        if isinstance(outcome, Paid):
            return outcome
        await asyncio.sleep(0.1)
    raise AssertionError("not paid")


def _payer(client: SvmClient, sessions: async_sessionmaker[AsyncSession]) -> SvmPayer:
    return SvmPayer(client, accounts.solver(), sessions, now=lambda: datetime.now(UTC))


async def test_sol_and_usdc_are_paid_once_creating_the_token_account(
    svm_node: SvmNodeProcess,
    seeded: SeededSvm,
    client: SvmClient,
    sessions: async_sessionmaker[AsyncSession],
) -> None:
    payer = _payer(client, sessions)
    sol, usdc = order(1000, seeded.usdc_mint), order(1001, seeded.usdc_mint)
    assert usdc.mint is not None
    vault_before = await client.balance(accounts.solver().pubkey())
    assert await client.token_balance(usdc.recipient, seeded.usdc_mint) == 0
    for each in (sol, usdc):
        paid = await _until_paid(payer, each)
        assert await payer.pay(each) == paid  # asked again: the same payment
    assert await client.balance(sol.recipient) == sol.amount
    assert await client.token_balance(usdc.recipient, seeded.usdc_mint) == usdc.amount
    rent = rpc(svm_node.rpc_url, "getMinimumBalanceForRentExemption", programs.TOKEN_ACCOUNT_SIZE)
    # The vault paid the SOL, the new token account's rent and two fees.
    assert (
        await client.balance(accounts.solver().pubkey())
        == vault_before - sol.amount - rent - 2 * 5000
    )


async def test_an_attempt_journalled_but_never_sent_is_re_signed_only_after_it_expired(
    seeded: SeededSvm, client: SvmClient, sessions: async_sessionmaker[AsyncSession]
) -> None:
    payer = _payer(client, sessions)
    dropped = order(1003, seeded.usdc_mint)  # USDC, to an account yet to be created
    # A crash between the journal write and the send: the attempt exists, nothing was sent.
    first = await payer._journal(dropped, number=1, expired=None)
    assert first is not None
    for _ in range(100):  # the window is TEST_OPTIONS' 20 slots of 100 ms
        if await client.block_height() > first.last_valid_block_height:
            break
        await asyncio.sleep(0.1)
    outcome = await payer.pay(dropped)
    assert isinstance(outcome, Pending) and outcome.attempt != first.signature
    paid = await _until_paid(payer, dropped)
    assert paid.reference == outcome.attempt
    assert await client.token_balance(dropped.recipient, seeded.usdc_mint) == dropped.amount
    assert await client.signature_status(first.signature) is None
    async with sessions() as session:
        rows = (
            await session.scalars(select(SvmPayment).where(SvmPayment.payment_key == dropped.key))
        ).all()
        assert [(row.attempt, row.status) for row in rows] == [(1, "expired"), (2, "landed")]


async def test_an_attempt_journalled_but_not_sent_is_resent_as_is_while_valid(
    seeded: SeededSvm, client: SvmClient, sessions: async_sessionmaker[AsyncSession]
) -> None:
    payer = _payer(client, sessions)
    pending = order(1004, seeded.usdc_mint)
    first = await payer._journal(pending, number=1, expired=None)
    assert first is not None
    assert (await _until_paid(payer, pending)).reference == first.signature


def test_kill_9_during_payments_pays_every_order_exactly_once(
    svm_node: SvmNodeProcess, seeded: SeededSvm, tmp_path: Path
) -> None:
    count, kills = 40, 5
    url = sqlite_url(tmp_path / "crash.db")
    upgrade(url)
    command = [sys.executable, "-m", "tests.integration.svm.pay_loop", url, svm_node.rpc_url,
               str(seeded.usdc_mint), str(count)]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    randomness = random.Random(9)
    journal = tmp_path / "crash.db"
    interrupted = 0
    for _ in range(kills):
        before = _journalled(journal)
        process = subprocess.Popen(command, cwd=REPO, env=env)
        # Killed while it works: once it journalled something new, at a random moment.
        deadline = time.monotonic() + 30
        while _journalled(journal) == before and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(randomness.uniform(0, 0.1))
        interrupted += _journalled(journal) < count
        process.send_signal(signal.SIGKILL)
        process.wait()
    assert interrupted >= 3  # most kills fell in the middle of the work
    final = subprocess.run(command, cwd=REPO, env=env, timeout=180, check=False)
    assert final.returncode == 0

    for index in range(count):
        each = order(index, seeded.usdc_mint)
        if each.mint is None:
            balance = rpc(svm_node.rpc_url, "getBalance", str(recipient(index)))["value"]
        else:
            account = programs.token_account(recipient(index), each.mint)
            balance = int(
                rpc(svm_node.rpc_url, "getTokenAccountBalance", str(account))["value"]["amount"]
            )
        assert balance == each.amount, f"order {index} paid {balance}, owed {each.amount}"
    landed = _landed_per_key(url)
    assert landed == Counter({f"order-{index}": 1 for index in range(count)})


def _journalled(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path)) as db:
        (rows,) = db.execute("SELECT count(*) FROM svm_payments").fetchone()
    return int(rows)


def _landed_per_key(url: str) -> Counter[str]:
    rows = rows_in(url, select(SvmPayment).where(SvmPayment.status == "landed"))
    return Counter(row.payment_key for row in rows)
