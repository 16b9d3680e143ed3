"""The gasless executor on the in-memory chain port: an accepted execution goes out once as a
type-4 transaction carrying its authorizations; mined, the sponsor's spend is recorded; a call
that paid its request leaves it to the indexer, one that did not (a revert, read by replaying
it on the block before; or no deposit) fails it; a standalone call ends with its transaction;
a lost broadcast answer is resumed from the journal."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_account.typed_transactions.typed_transaction import TypedTransaction
from hexbytes import HexBytes
from sqlalchemy import insert, select

from crossfill.domain.set_code import Authorization
from crossfill.errors import ChainUnreachable
from crossfill.kinds.evm.client import CallOutcome
from crossfill.kinds.evm.gasless_executor import GaslessExecutor
from crossfill.kinds.evm.txmanager import TxManager
from crossfill.store.tables import GaslessExecution, Request, RequestTransaction, SentTransaction
from crossfill.types import Address
from tests.support.synthetic import synthetic_requests
from tests.unit.fake_chain import FakeChain
from tests.unit.foreign_nonce import signed_again_after_a_foreign_nonce
from tests.unit.receipt_logs import native_deposit_log
from tests.unit.worker_world import START, ChainWorld, chain_world

DELEGATE = "0x" + "de" * 20
CALL_DATA = "0x" + "ab" * 36


@dataclass
class World:
    base: ChainWorld
    executor: GaslessExecutor
    request_id: str
    order_id: str
    user: str

    @property
    def chain(self) -> FakeChain:
        return self.base.chain

    async def rows(self) -> tuple[GaslessExecution, Request, list[SentTransaction]]:
        async with self.base.sessions() as session:
            execution = await session.get(GaslessExecution, self.request_id)
            request = await session.get(Request, self.request_id)
            journal = list(await session.scalars(select(SentTransaction)))
        assert execution is not None and request is not None
        return execution, request, journal

    async def transactions(self) -> list[tuple[str, str, str]]:
        async with self.base.sessions() as session:
            rows = await session.scalars(
                select(RequestTransaction).where(RequestTransaction.request_id == self.request_id)
            )
            return sorted((row.kind, row.tx_hash, row.status) for row in rows)

    async def sent(self) -> SentTransaction:
        await self.executor.tick()
        _, _, (sent,) = await self.rows()
        return sent

    async def mark_standalone(self) -> None:
        async with self.base.sessions() as session, session.begin():
            execution = await session.get(GaslessExecution, self.request_id)
            assert execution is not None
            execution.standalone = True


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with chain_world(tmp_path) as base:
        sponsor = base.signer()
        user: LocalAccount = Account.create()
        # Typed as SignedMessage by eth-account, it is a SignedSetCodeAuthorization.
        signed: Any = user.sign_authorization(
            {"chainId": base.config.id, "address": DELEGATE, "nonce": 0}
        )
        authorization = Authorization(
            chain_id=base.config.id,
            address=Address(DELEGATE),
            nonce=0,
            y_parity=signed.y_parity,
            r=signed.r,
            s=signed.s,
        )
        txmanager = TxManager(
            base.chain, base.state, sponsor, base.sessions, now=base.clock, holder="me"
        )
        executor = GaslessExecutor(
            base.runtime, base.sessions, txmanager, now=base.clock, interval_seconds=0.1
        )
        (row,) = synthetic_requests(1, start=START).requests
        row.update(status="depositing", origin_chain_id=base.config.id)
        execution = {
            "request_id": row["id"],
            "api_key_id": 1,
            "chain_id": base.config.id,
            "sponsor": sponsor.address.lower(),
            "to_address": user.address.lower(),
            "call_data": CALL_DATA,
            "value": "0",
            "authorization_list": [authorization.to_json()],
            "gas_limit": 200_000,
            "reserved_wei": 200_000 * 10**9,
            "spent_wei": None,
            "subsidized": False,
            "state": "queued",
            "tx_hash": None,
            "created_at": START,
            "updated_at": START,
        }
        async with base.engine.begin() as connection:
            await connection.execute(insert(Request), [row])
            await connection.execute(insert(GaslessExecution), [execution])
        yield World(base, executor, row["id"], row["order_id"], user.address)


async def test_an_execution_is_sent_once_as_type_4_and_its_spend_recorded(world: World) -> None:
    await world.executor.tick()
    execution, _, (sent,) = await world.rows()
    assert execution.state == "submitted" and world.chain.sent == [sent.tx_hash]
    tx = TypedTransaction.from_bytes(HexBytes(sent.raw_transaction)).as_dict()
    assert tx["type"] == 4 and bytes(tx["data"]).hex() == CALL_DATA[2:]
    (carried,) = tx["authorizationList"]
    assert bytes(carried["address"]) == bytes.fromhex(DELEGATE[2:])
    await world.executor.tick()  # sent, not mined: nothing new
    assert len(world.chain.sent) == 1
    depository = world.base.config.contracts.depository
    world.chain.mine(
        sent.tx_hash, logs=[native_deposit_log(depository, world.user, 10**15, world.order_id)]
    )
    await world.executor.tick()
    execution, request, journal = await world.rows()
    assert (execution.state, execution.spent_wei) == ("mined", 50_000 * 2)
    assert request.status == "depositing"  # the indexer moves it on when it sees the deposit
    assert len(journal) == 1


async def test_a_call_that_mined_without_depositing_for_the_order_fails_its_request(
    world: World,
) -> None:
    sent = await world.sent()
    stranger_order = "0x" + "77" * 32
    depository = world.base.config.contracts.depository
    world.chain.mine(
        sent.tx_hash, logs=[native_deposit_log(depository, world.user, 10**15, stranger_order)]
    )
    await world.executor.tick()
    execution, request, _ = await world.rows()
    assert (execution.state, execution.spent_wei) == ("mined", 50_000 * 2)
    assert (request.status, request.fail_reason) == ("failure", "INCORRECT_PAYMENT")
    assert request.fail_details is not None
    assert request.fail_details["txHash"] == sent.tx_hash
    assert "made no deposit" in request.fail_details["message"]
    assert await world.transactions() == [("deposit", sent.tx_hash, "success")]
    assert world.chain.simulated_at == []  # nothing reverted: nothing to replay


async def test_a_mined_revert_fails_the_request_with_the_replayed_reason(world: World) -> None:
    sent = await world.sent()
    revert_data = bytes.fromhex("91cab504" + f"{3:064x}")  # BatchDelegate NonceAlreadyUsed(3)
    world.chain.simulated = CallOutcome(False, revert_data, [])
    world.chain.mine(sent.tx_hash, status=0)
    await world.executor.tick()
    execution, request, _ = await world.rows()
    assert (execution.state, execution.spent_wei) == ("reverted", 50_000 * 2)
    assert (request.status, request.fail_reason) == ("failure", "TRANSACTION_REVERTED")
    assert world.chain.simulated_at == [world.chain.head_block.number - 1]
    assert request.fail_details == {
        "message": "the sponsored call reverted: NonceAlreadyUsed(3)",
        "txHash": sent.tx_hash,
        "revert": {"error": "NonceAlreadyUsed", "data": "0x" + revert_data.hex()},
    }
    assert await world.transactions() == [("deposit", sent.tx_hash, "failure")]


async def test_an_unreachable_replay_is_retried_before_the_request_is_settled(
    world: World,
) -> None:
    sent = await world.sent()
    world.chain.mine(sent.tx_hash, status=0)
    world.chain.fail("simulate", ChainUnreachable("connection reset"))
    await world.executor.tick()
    execution, request, _ = await world.rows()
    assert (execution.state, request.status) == ("submitted", "depositing")
    await world.executor.tick()
    execution, request, _ = await world.rows()
    assert (execution.state, request.status) == ("reverted", "failure")


async def test_a_standalone_call_succeeds_with_its_transaction(world: World) -> None:
    await world.mark_standalone()
    sent = await world.sent()
    world.chain.mine(sent.tx_hash)
    await world.executor.tick()
    execution, request, _ = await world.rows()
    assert (execution.state, execution.spent_wei) == ("mined", 50_000 * 2)
    assert (request.status, request.fail_details) == ("success", None)
    assert await world.transactions() == [
        ("deposit", sent.tx_hash, "success"),
        ("fill", sent.tx_hash, "success"),
    ]


async def test_a_standalone_call_that_reverts_fails(world: World) -> None:
    await world.mark_standalone()
    sent = await world.sent()
    world.chain.mine(sent.tx_hash, status=0)
    await world.executor.tick()
    _, request, _ = await world.rows()
    assert (request.status, request.fail_reason) == ("failure", "TRANSACTION_REVERTED")
    assert request.fail_details is not None and request.fail_details["revert"] is None


async def test_a_lost_broadcast_answer_is_resumed_from_the_journal(world: World) -> None:
    world.chain.fail("send_raw_after_taking", ChainUnreachable("connection reset"))
    await world.executor.tick()
    execution, _, (journalled,) = await world.rows()
    assert execution.state == "queued" and world.chain.sent == [journalled.tx_hash]
    await world.executor.tick()
    execution, _, journal = await world.rows()
    assert execution.state == "submitted" and len(journal) == 1
    world.chain.mine(journalled.tx_hash)
    await world.executor.tick()
    execution, _, journal = await world.rows()
    assert execution.state == "mined" and len(journal) == 1
    assert set(world.chain.sent) == {journalled.tx_hash}


async def test_a_stuck_execution_is_replaced_with_its_authorizations_and_one_lands(
    world: World,
) -> None:
    await world.executor.tick()
    _, _, (first,) = await world.rows()
    world.base.clock.advance(timedelta(seconds=world.base.config.replace_stuck_after_seconds + 1))
    await world.executor.tick()
    execution, _, journal = await world.rows()
    replacement = next(row for row in journal if row.id != first.id)
    assert replacement.nonce == first.nonce
    old = TypedTransaction.from_bytes(HexBytes(first.raw_transaction)).as_dict()
    new = TypedTransaction.from_bytes(HexBytes(replacement.raw_transaction)).as_dict()
    assert new["type"] == 4 and new["authorizationList"] == old["authorizationList"]
    assert new["maxFeePerGas"] > old["maxFeePerGas"]
    world.chain.mine(replacement.tx_hash)
    await world.executor.tick()
    execution, _, journal = await world.rows()
    assert (execution.state, execution.tx_hash) == ("mined", replacement.tx_hash)
    assert sorted(row.status for row in journal) == ["dropped", "mined"]


async def test_an_execution_whose_nonce_another_transaction_took_is_signed_again(
    world: World,
) -> None:
    await world.executor.tick()

    async def journal() -> list[SentTransaction]:
        return (await world.rows())[2]

    again = await signed_again_after_a_foreign_nonce(
        world.chain,
        world.base.clock,
        world.executor.txmanager.sender,
        world.executor.tick,
        journal,
    )
    execution, _, _ = await world.rows()
    assert (execution.state, execution.tx_hash) == ("submitted", again.tx_hash)


def _checking_funds(world: World) -> GaslessExecutor:
    """The executor with its sponsor's balance checked before signing (as the service runs
    it: the balance its executor reads, `ChainState.sponsor_balance`)."""
    sponsor = world.executor.txmanager.account
    txmanager = TxManager(
        world.chain, world.base.state, sponsor, world.base.sessions, now=world.base.clock,
        holder="me", funds=lambda: world.base.state.sponsor_balance(sponsor.address),
    )  # fmt: skip
    return GaslessExecutor(
        world.base.runtime, world.base.sessions, txmanager, now=world.base.clock,
        interval_seconds=0.1, role="gasless-sponsor-0",
    )  # fmt: skip


async def test_an_execution_its_sponsor_cannot_pay_waits_unsigned_then_goes_once_funded(
    world: World,
) -> None:
    executor = _checking_funds(world)
    sponsor = executor.txmanager.sender
    world.chain.fund(sponsor, 1_000)  # far below 200,000 gas at any fee
    await executor.tick()
    execution, request, journal = await world.rows()
    assert execution.state == "queued" and request.status == "depositing"
    assert journal == [] and world.chain.sent == []  # never signed: no nonce taken
    waiting = world.base.state.sponsor_waiting[sponsor]
    assert (waiting.role, waiting.balance) == ("gasless-sponsor-0", 1_000)
    assert waiting.needed > 200_000  # its gas at the offered fee
    world.chain.fund(sponsor, waiting.needed)  # topped up to what it needs
    await executor.tick()
    execution, _, (sent,) = await world.rows()
    assert execution.state == "submitted" and world.chain.sent == [sent.tx_hash]
    assert sponsor not in world.base.state.sponsor_waiting


async def test_a_sponsor_balance_the_chain_does_not_answer_ends_the_tick_unsigned(
    world: World,
) -> None:
    executor = _checking_funds(world)
    world.chain.fail("native_balances", ChainUnreachable("node: ConnectError"))
    with pytest.raises(ChainUnreachable):
        await executor.tick()  # the loop backs off and ticks again
    assert (await world.rows())[2] == []
    await executor.tick()
    execution, _, (sent,) = await world.rows()
    assert execution.state == "submitted" and world.chain.sent == [sent.tx_hash]
