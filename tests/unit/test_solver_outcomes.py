"""The solver on the in-memory chain port, for every chain outcome: only the contract's own
revert refuses an order; every other failure leaves it pending and it is tried again."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import insert

from crossfill.app.fills import stored_fill_plan
from crossfill.domain.fill_plan import FillPlan, Payment
from crossfill.errors import (
    CannotPayGas,
    ChainError,
    ChainUnreachable,
    NodeBehind,
    RateLimited,
    Reverted,
    SignerBusy,
)
from crossfill.kinds.evm.solver import RETRY_AFTER, FillClaim
from crossfill.store import signer_leases
from crossfill.store.db import as_utc
from crossfill.store.tables import Request, SignerLease
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.unit.solver_world import SolverWorld, pending_request, reverted, store_pending_request
from tests.unit.worker_world import START, chain_world


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[SolverWorld]:
    async with chain_world(tmp_path) as base:
        row = await store_pending_request(base, 10**17)
        yield SolverWorld(base, base.solver(), row["id"], row["order_id"])


def _service_share(world: SolverWorld) -> tuple[float, float]:
    """Fills broadcast, and their service shares summed (seconds on the world's clock)."""
    (family,) = world.solver.metrics.fill_service.collect()
    count = sum(s.value for s in family.samples if s.name.endswith("_count"))
    total = sum(s.value for s in family.samples if s.name.endswith("_sum"))
    return count, total


async def test_a_fill_that_simulates_is_signed_journalled_and_submitted(world: SolverWorld) -> None:
    world.clock.advance(timedelta(seconds=3))  # since the deposit was accepted
    await world.solver.tick()
    request = await world.request()
    (sent,) = await world.journal()
    assert request.status == "submitted"
    assert world.chain.sent == [sent.tx_hash]
    assert _service_share(world) == (1, 3.0)


async def test_a_handed_over_request_leased_elsewhere_is_left_alone(world: SolverWorld) -> None:
    async with world.solver.sessions() as session, session.begin():
        row = await session.get(Request, world.request_id)
        assert row is not None
        row.lease_owner, row.lease_expires_at = "another process", START + timedelta(minutes=1)
    world.solver.take(world.request_id)
    await world.solver.tick()
    assert (await world.request()).status == "pending"
    assert world.chain.sent == []


async def test_a_solver_taking_the_key_over_frees_what_the_previous_holder_leased(
    world: SolverWorld,
) -> None:
    """The previous holder cannot sign any more (fenced off by the new token): the requests
    it held leased are filled now, not when their leases would have run out."""
    async with world.solver.sessions() as session, session.begin():
        row = await session.get(Request, world.request_id)
        assert row is not None
        row.lease_owner, row.lease_expires_at = "the previous holder", START + timedelta(minutes=1)
        session.add(
            SignerLease(
                chain_id=world.solver.config.id,
                sender=world.solver.txmanager.sender,
                holder="the previous holder",
                token=4,
                expires_at=START,
            )
        )
    await world.solver.tick()
    assert world.solver.txmanager.signer_token == 5
    (sent,) = await world.journal()
    assert (await world.request()).status == "submitted"
    assert world.chain.sent == [sent.tx_hash]


async def test_a_handed_over_request_is_filled_at_the_next_tick(world: SolverWorld) -> None:
    world.solver.take(world.request_id)
    await world.solver.tick()
    (sent,) = await world.journal()
    assert (await world.request()).status == "submitted"
    assert world.chain.sent == [sent.tx_hash]


@pytest.mark.parametrize(
    ("revert", "reason"),
    [
        (reverted("Error", "UniswapV2Router: INSUFFICIENT_OUTPUT_AMOUNT"), "SLIPPAGE"),
        (reverted("Error", "something else"), "EXECUTION_REVERTED"),
        (reverted("NativeValueMismatch", 1, 2), "EXECUTION_REVERTED"),
        (reverted(""), "EXECUTION_REVERTED"),
    ],
)
async def test_a_revert_refuses_the_fill_with_its_reason(
    world: SolverWorld, revert: Reverted, reason: str
) -> None:
    world.chain.fail("estimate_gas", revert)
    await world.solver.tick()
    request = await world.request()
    assert (request.status, request.fail_reason) == ("failure", reason)
    assert world.chain.sent == []


async def test_already_filled_is_found_on_chain_and_never_refused(world: SolverWorld) -> None:
    fill_hash = "0x" + "fe" * 32
    world.chain.filled[world.order_id] = fill_hash
    world.chain.fail("estimate_gas", reverted("AlreadyFilled", bytes(32)))
    await world.solver.tick()
    request = await world.request()
    assert request.status == "submitted" and world.chain.sent == []


@pytest.mark.parametrize(
    "outcome",
    [
        ChainUnreachable("timeout"),
        RateLimited("429", retry_after_seconds=1),
        NodeBehind("behind", block_number=101),
        ChainError("the node answered nonsense"),
    ],
    ids=["unreachable", "rate-limited", "node-behind", "other"],
)
async def test_any_other_simulation_failure_leaves_the_order_pending_for_a_retry(
    world: SolverWorld, outcome: ChainError
) -> None:
    world.chain.fail("estimate_gas", outcome)
    await world.solver.tick()
    request = await world.request()
    assert request.status == "pending" and request.fail_reason is None
    assert request.lease_expires_at is not None
    assert as_utc(request.lease_expires_at) == START + RETRY_AFTER
    assert _service_share(world) == (0, 0)
    world.clock.advance(RETRY_AFTER + timedelta(seconds=1))
    await world.solver.tick()
    assert (await world.request()).status == "submitted"
    # The wait for the retry is the service's share too.
    assert _service_share(world) == (1, (RETRY_AFTER + timedelta(seconds=1)).total_seconds())


async def test_a_lost_broadcast_answer_is_found_in_the_journal_not_signed_again(
    world: SolverWorld,
) -> None:
    world.chain.fail("send_raw_after_taking", ChainUnreachable("connection reset"))
    await world.solver.tick()
    assert (await world.request()).status == "pending"
    world.clock.advance(RETRY_AFTER + timedelta(seconds=1))
    await world.solver.tick()
    (journalled,) = await world.journal()
    assert (await world.request()).status == "submitted"
    # Perhaps sent again (the same bytes: the node has it already), never signed again.
    assert set(world.chain.sent) == {journalled.tx_hash}


async def test_an_unknown_solver_balance_waits_instead_of_refusing(world: SolverWorld) -> None:
    world.state.solver_balances = {}
    await world.solver.tick()
    request = await world.request()
    assert request.status == "pending" and "estimate_gas" not in world.chain.calls


def _shortfall(world: SolverWorld) -> float:
    """`crossfill_solver_shortfall` of the chain's gas currency, as exported now."""
    value = world.solver.metrics.registry.get_sample_value(
        "crossfill_solver_shortfall",
        {"chain_id": str(world.chain.chain_id), "currency": "ETH"},
    )
    return value or 0.0


async def _past_the_balance_wait(world: SolverWorld) -> None:
    """The clock past the waits for funds (inventory and gas) since the deposit was accepted,
    and the request's lease past its retry."""
    config = world.solver.config
    wait = max(config.solver_balance_wait_seconds, config.inventory_wait_seconds)
    world.clock.advance(timedelta(seconds=wait + 1))


async def test_a_fill_the_balance_cannot_pay_waits_unsigned_then_is_refused(
    world: SolverWorld,
) -> None:
    world.state.solver_balances = {NATIVE_EVM_ADDRESS: 10}
    await world.solver.tick()
    request = await world.request()
    assert (request.status, request.fail_reason) == ("pending", None)
    assert world.chain.sent == [] and "estimate_gas" not in world.chain.calls
    assert world.state.solver_shortfall == {NATIVE_EVM_ADDRESS: 10**17 - 10}
    assert _shortfall(world) == (10**17 - 10) / 10**18
    await _past_the_balance_wait(world)
    await world.solver.tick()
    # Its output is not covered: the inventory is exceeded, not merely the gas.
    assert (await world.request()).fail_reason == "SOLVER_CAPACITY_EXCEEDED"
    await world.solver.tick()
    assert world.state.solver_shortfall == {} and _shortfall(world) == 0


async def test_a_fill_whose_output_fits_but_not_its_gas_is_not_signed_until_topped_up(
    world: SolverWorld,
) -> None:
    world.state.solver_balances = {NATIVE_EVM_ADDRESS: 10**17 + 1}
    await world.solver.tick()
    request = await world.request()
    assert request.status == "pending" and world.chain.sent == []
    assert "estimate_gas" in world.chain.calls  # simulated: its gas is what is short
    (short,) = world.state.solver_shortfall.values()
    assert 0 < short < 10**15
    world.state.solver_balances = {NATIVE_EVM_ADDRESS: 10**18}
    world.clock.advance(RETRY_AFTER + timedelta(seconds=1))
    await world.solver.tick()
    (sent,) = await world.journal()
    assert (await world.request()).status == "submitted" and sent.nonce == 0
    assert world.state.solver_shortfall == {}


async def _second_request(world: SolverWorld, amount: int) -> str:
    """Another pending request for this chain paying `amount` of its gas currency."""
    row = await store_pending_request(world.base, amount, index=1)
    request_id: str = row["id"]
    return request_id


async def test_an_unpayable_fill_never_holds_the_nonce_of_a_payable_one(world: SolverWorld) -> None:
    small = await _second_request(world, 10**15)
    world.state.solver_balances = {NATIVE_EVM_ADDRESS: 10**17 + 1}  # the large one's output
    await world.solver.tick()
    (sent,) = await world.journal()
    assert (sent.request_id, sent.nonce) == (small, 0)
    assert world.chain.sent == [sent.tx_hash]
    assert (await world.request()).status == "pending"


async def test_fills_in_flight_count_against_the_balance(world: SolverWorld) -> None:
    """Each fill alone is payable, not both: the second waits for the first to be mined
    rather than go to a node that would refuse it and hold every nonce after it."""
    await _second_request(world, 10**17)
    world.state.solver_balances = {NATIVE_EVM_ADDRESS: 15 * 10**16}
    await world.solver.tick()
    (sent,) = await world.journal()
    assert len(world.chain.sent) == 1
    world.chain.mine(sent.tx_hash)
    world.state.solver_balances = {NATIVE_EVM_ADDRESS: 10**18}  # the next poll's reading
    world.clock.advance(RETRY_AFTER + timedelta(seconds=1))
    await world.solver.tick()
    await world.solver.tick()
    assert len(await world.journal()) == 2 and len(world.chain.sent) == 2


async def test_a_fill_a_node_refuses_for_funds_has_its_nonce_voided_at_once(
    world: SolverWorld,
) -> None:
    world.chain.fail(
        "send_raw", CannotPayGas("eth_sendRawTransaction failed: insufficient funds for gas")
    )
    await world.solver.tick()
    fill, void = sorted(await world.journal(), key=lambda row: row.id)
    assert (fill.purpose, void.purpose) == ("fill", "void") and fill.nonce == void.nonce == 0
    assert world.chain.sent == [void.tx_hash]


async def test_while_another_process_holds_the_key_nothing_is_claimed(world: SolverWorld) -> None:
    async with world.solver.sessions() as session, session.begin():
        another = signer_leases.LeaseClaim(
            world.chain.chain_id,
            world.solver.txmanager.sender,
            holder="another process",
            lease=timedelta(seconds=30),
        )
        await signer_leases.take(session, another, now=START)
    with pytest.raises(SignerBusy):
        await world.solver.tick()
    request = await world.request()
    assert request.status == "pending" and request.lease_owner is None
    assert world.chain.calls == []


async def test_the_solver_executes_the_stored_plan_not_the_row(world: SolverWorld) -> None:
    """A plan that spends more than the solver holds is refused as such, whatever the
    row's own amounts say: the solver derives nothing again."""
    stored = FillPlan(
        world.chain.chain_id,
        world.order_id,
        (Payment("0x" + "12" * 20, NATIVE_EVM_ADDRESS, 10**22),),
        (),
        10**22,
        NATIVE_EVM_ADDRESS,
        10**22,
        int((START + timedelta(minutes=10)).timestamp()),
    )
    async with world.solver.sessions() as session, session.begin():
        row = await session.get(Request, world.request_id)
        assert row is not None
        row.fill_plan = stored.to_json()
    await world.solver.tick()
    assert (await world.request()).status == "pending"
    await _past_the_balance_wait(world)
    await world.solver.tick()
    assert (await world.request()).fail_reason == "SOLVER_CAPACITY_EXCEEDED"


async def _submitted_fill(world: SolverWorld) -> str:
    await world.solver.tick()
    (sent,) = await world.journal()
    assert (await world.request()).status == "submitted"
    return sent.tx_hash


async def test_a_nonce_taken_by_another_transaction_is_signed_again_once_confirmed(
    world: SolverWorld,
) -> None:
    first = await _submitted_fill(world)
    sender = world.solver.txmanager.sender
    world.chain.nonces[sender] = 1  # nonce 0 went to a transaction we never signed
    await world.solver.tick()
    assert len(await world.journal()) == 1  # once is not enough: a node may be behind
    world.clock.advance(timedelta(seconds=11))
    await world.solver.tick()
    journal = await world.journal()
    assert journal[0].status == "conflicted" and len(journal) == 2
    second = journal[1]
    assert second.nonce == 1 and world.chain.sent == [first, second.tx_hash]
    world.chain.mine(second.tx_hash)
    await world.solver.tick()
    request = await world.request()
    assert request.status == "success"


async def test_a_nonce_taken_by_a_fill_of_the_order_is_that_fill(world: SolverWorld) -> None:
    await _submitted_fill(world)
    elsewhere = "0x" + "cd" * 32
    world.chain.filled[world.order_id] = elsewhere
    world.chain.mine(elsewhere)
    world.chain.nonces[world.solver.txmanager.sender] = 1
    await world.solver.tick()
    world.clock.advance(timedelta(seconds=11))
    await world.solver.tick()
    await world.solver.tick()
    assert (await world.request()).status == "success"
    assert len(world.chain.sent) == 1  # nothing signed again


async def test_a_fill_not_signed_again_after_its_nonce_was_taken_is_tried_at_the_next_tick(
    world: SolverWorld,
) -> None:
    await _submitted_fill(world)
    world.chain.nonces[world.solver.txmanager.sender] = 1
    await world.solver.tick()
    world.clock.advance(timedelta(seconds=11))
    world.chain.fail("estimate_gas", ChainUnreachable("timeout"))
    await world.solver.tick()
    assert [row.status for row in await world.journal()] == ["conflicted"]
    await world.solver.tick()
    taken, again = sorted(await world.journal(), key=lambda row: row.id)
    assert taken.status == "conflicted" and again.nonce == 1
    assert world.chain.sent[-1] == again.tx_hash


async def test_our_own_fill_mined_late_is_never_taken_for_a_conflict(world: SolverWorld) -> None:
    first = await _submitted_fill(world)
    world.chain.nonces[world.solver.txmanager.sender] = 1
    await world.solver.tick()  # the nonce is used, our receipt not visible yet
    world.chain.mine(first)
    world.clock.advance(timedelta(seconds=11))
    await world.solver.tick()
    assert (await world.request()).status == "success"
    assert world.chain.sent == [first]


async def _claimed_in_a_transaction(world: SolverWorld, *, commit: bool = True) -> FillClaim | None:
    """Claimed and sealed in a transaction as the indexer does, which commits or not; the
    claim is handed back before its `committed` or `dropped` is called."""

    class RolledBack(Exception):
        pass

    claim = None
    try:
        async with world.solver.sessions() as session, session.begin():
            request = await session.get(Request, world.request_id)
            assert request is not None
            # Stored at quote time (a request without one is planned from its row later).
            request.fill_plan = stored_fill_plan(request, world.solver.config).to_json()
            claim = await world.solver.claim_pending(session, request)
            if claim is not None:
                await claim.seal(session, alone=True)
            if not commit:
                raise RolledBack
    except RolledBack:
        pass
    return claim


async def test_without_the_signer_lease_nothing_is_claimed_in_the_indexers_transaction(
    world: SolverWorld,
) -> None:
    assert await _claimed_in_a_transaction(world) is None
    assert (await world.request()).lease_owner is None
    assert world.chain.calls == []


async def test_a_fill_claimed_in_the_indexers_transaction_is_journalled_there_and_sent_after(
    world: SolverWorld,
) -> None:
    await world.solver.txmanager.hold_signer()
    claim = await _claimed_in_a_transaction(world)
    assert claim is not None
    assert (await world.request()).lease_owner == "me"
    (journalled,) = await world.journal()  # committed with the claim, not broadcast yet
    assert (journalled.status, world.chain.sent) == ("signed", [])
    await claim.committed()
    assert world.chain.sent == [journalled.tx_hash]
    await world.solver.tick()
    assert [row.tx_hash for row in await world.journal()] == [journalled.tx_hash]
    assert (await world.request()).status == "submitted"
    assert world.chain.calls.count("estimate_gas") == 1  # the one started in the transaction


async def test_a_fill_journalled_in_a_transaction_that_rolled_back_is_never_sent(
    world: SolverWorld,
) -> None:
    await world.solver.txmanager.hold_signer()
    claim = await _claimed_in_a_transaction(world, commit=False)
    assert claim is not None
    claim.dropped()
    assert await world.journal() == []
    assert world.chain.sent == []
    await world.solver.tick()  # claimed afresh: signed with the nonce read again
    (sent,) = await world.journal()
    assert (await world.request()).status == "submitted"
    assert world.chain.sent == [sent.tx_hash]


async def test_a_claim_whose_simulation_reverts_journals_nothing_and_the_tick_decides(
    world: SolverWorld,
) -> None:
    world.chain.fail("estimate_gas", reverted("OrderExpired"))
    await world.solver.txmanager.hold_signer()
    claim = await _claimed_in_a_transaction(world)
    assert claim is not None
    assert await world.journal() == []
    await claim.committed()
    await world.solver.tick()
    assert world.chain.sent == []
    assert (await world.request()).status == "failure"


async def test_while_another_send_holds_the_key_the_claim_journals_nothing(
    world: SolverWorld,
) -> None:
    await world.solver.txmanager.hold_signer()
    async with world.solver.txmanager._lock:  # a refund being signed and sent, say
        claim = await _claimed_in_a_transaction(world)
    assert claim is not None
    assert await world.journal() == []
    await claim.committed()
    await world.solver.tick()  # signed there, in turn
    (sent,) = await world.journal()
    assert world.chain.sent == [sent.tx_hash]


async def test_a_fill_that_cannot_be_signed_never_undoes_the_claiming_transaction(
    world: SolverWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object) -> None:
        raise ValueError("a bug in signing")

    await world.solver.txmanager.hold_signer()
    monkeypatch.setattr(world.solver.txmanager.signer, "sign", broken)
    claim = await _claimed_in_a_transaction(world)
    assert claim is not None
    assert (await world.request()).lease_owner == "me"  # committed, the fill left out
    assert await world.journal() == []
    await claim.committed()
    await world.solver.tick()  # the same failure there: the request fails, its deposit refunded
    assert (await world.request()).status == "failure"
    assert world.chain.sent == []


async def test_a_claim_after_the_lease_was_lost_journals_nothing_and_keeps_its_deposit(
    world: SolverWorld,
) -> None:
    await world.solver.txmanager.hold_signer()
    async with world.solver.sessions() as session, session.begin():
        await signer_leases.release_all(session)  # another process may take it now
    claim = await _claimed_in_a_transaction(world)
    assert claim is not None
    assert await world.journal() == []
    await claim.committed()
    assert world.chain.sent == []


async def test_a_fill_journalled_before_the_claim_is_resumed_not_signed_again(
    world: SolverWorld,
) -> None:
    world.chain.fail("send_raw_after_taking", ChainUnreachable("connection reset"))
    await world.solver.tick()  # signed and journalled; its broadcast's answer lost
    (journalled,) = await world.journal()
    await world.solver.txmanager.hold_signer()
    claim = await _claimed_in_a_transaction(world)
    assert claim is not None
    await claim.committed()
    await world.solver.tick()
    assert [row.tx_hash for row in await world.journal()] == [journalled.tx_hash]
    assert (await world.request()).status == "submitted"
    assert world.chain.sent == [journalled.tx_hash]


async def test_a_broadcast_refused_by_the_node_is_sent_again_with_a_backoff(
    world: SolverWorld,
) -> None:
    """The node refused the fill's broadcast (5xx, a dropped connection): the journalled bytes
    are sent again within seconds, the wait doubling while it keeps failing; never re-signed."""
    world.chain.fail("send_raw", *[ChainUnreachable("HTTP 502")] * 3)
    await world.solver.tick()  # signed, journalled; the broadcast fails
    (journalled,) = await world.journal()
    assert world.chain.sent == []
    await world.solver.tick()
    assert world.chain.calls.count("send_raw") == 1  # not due yet
    world.clock.advance(timedelta(seconds=2))
    await world.solver.tick()  # the first resend fails: the next one 2 s later
    assert world.chain.calls.count("send_raw") == 2
    world.clock.advance(timedelta(seconds=1))
    await world.solver.tick()
    assert world.chain.calls.count("send_raw") == 2
    world.clock.advance(timedelta(seconds=1))
    await world.solver.tick()  # fails again: the next one 4 s later
    assert world.chain.calls.count("send_raw") == 3
    world.clock.advance(timedelta(seconds=4))
    await world.solver.tick()
    assert world.chain.sent == [journalled.tx_hash]
    (journalled,) = await world.journal()
    assert journalled.status == "broadcast"
    await world.solver.tick()
    assert world.chain.sent == [journalled.tx_hash]  # acknowledged: not sent again


TOKEN = "0x" + "ab" * 20


async def _token_request(world: SolverWorld, index: int, amount: int) -> str:
    """Another pending request for this chain whose stored plan pays `amount` of TOKEN."""
    row = pending_request(index, world.chain.chain_id, 0)
    deadline = int((START + timedelta(minutes=10)).timestamp())
    plan = FillPlan(
        world.chain.chain_id,
        row["order_id"],
        (Payment("0x" + "12" * 20, TOKEN, amount),),
        (),
        0,
        TOKEN,
        amount,
        deadline,
    )
    row.update(destination_currency=TOKEN, amount_out=str(amount), fill_plan=plan.to_json())
    async with world.solver.sessions() as session, session.begin():
        await session.execute(insert(Request), [row])
    request_id: str = row["id"]
    return request_id


async def test_token_fills_signed_count_against_the_balance_until_it_is_read_paid(
    world: SolverWorld,
) -> None:
    """Two token orders that each fit and together do not: the first in deposit order is
    signed, the second waits unsigned for repayments or a top-up, then is refunded as over
    the inventory (SOLVER_CAPACITY_EXCEEDED), never sent to fail."""
    first = await _token_request(world, 1, 100)
    second = await _token_request(world, 2, 100)
    async with world.solver.sessions() as session, session.begin():
        row = await session.get(Request, second)
        assert row is not None
        row.updated_at = START + timedelta(seconds=1)  # its deposit accepted after the first's
    world.state.solver_balances = {NATIVE_EVM_ADDRESS: 10**18, TOKEN: 150}
    await world.solver.tick()
    token_fills = [row for row in await world.journal() if row.request_id in (first, second)]
    assert [row.request_id for row in token_fills] == [first]
    assert world.state.solver_shortfall == {TOKEN: 50}
    # The first is mined; until the balance is read at its block, its output stays counted.
    world.chain.mine(token_fills[0].tx_hash)
    world.clock.advance(RETRY_AFTER + timedelta(seconds=1))
    await world.solver.tick()
    assert len([row for row in await world.journal() if row.request_id == second]) == 0
    world.state.record_head(world.chain.push_head(), 1.0)
    world.state.solver_balances = {NATIVE_EVM_ADDRESS: 10**18, TOKEN: 50}
    await _past_the_balance_wait(world)
    await world.solver.tick()
    async with world.solver.sessions() as session:
        refused = await session.get(Request, second)
    assert refused is not None and refused.fail_reason == "SOLVER_CAPACITY_EXCEEDED"
    assert world.state.solver_shortfall == {}


async def test_a_fill_short_of_its_gas_alone_is_refunded_as_balance_too_low(
    world: SolverWorld,
) -> None:
    world.state.solver_balances = {NATIVE_EVM_ADDRESS: 10**17 + 1}  # the output, not its gas
    await world.solver.tick()
    assert (await world.request()).status == "pending"
    await _past_the_balance_wait(world)
    await world.solver.tick()
    assert (await world.request()).fail_reason == "SOLVER_BALANCE_TOO_LOW"
