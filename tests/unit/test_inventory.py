"""The solver's inventory arithmetic (`domain.inventory`): per currency, what orders in
flight commit, what is free, and what a balance lacks for a fill; and the committed sums as
the store reads them (`store.inventory`)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import insert

from crossfill.app.inventory import InventoryView
from crossfill.domain.deposit_checks import DepositVerdict
from crossfill.domain.fill_plan import FillPlan, Payment
from crossfill.domain.inventory import Inventory, fill_outputs, inventories, shortfall, total
from crossfill.domain.repayments import SENDING
from crossfill.kinds.evm.reserved_inventory import EvmReservedInventory
from crossfill.store import inventory
from crossfill.store.deposits import CONFIRMED
from crossfill.store.tables import AppFee, Deposit, Repayment, Request, RequestTransaction
from crossfill.types import NATIVE_EVM_ADDRESS, ChainId
from tests.support.synthetic import synthetic_requests
from tests.unit.worker_world import START, chain_world

NATIVE = NATIVE_EVM_ADDRESS
USDC = "0x" + "ab" * 20


def test_free_is_the_balance_less_what_is_committed_and_may_go_below_zero() -> None:
    assert Inventory(balance=100, committed=30).free == 70
    over = Inventory(balance=100, committed=130, owed=40)
    assert (over.free, over.servable, over.owed) == (-30, 0, 40)


def test_a_fill_commits_its_native_value_and_its_token_output() -> None:
    assert fill_outputs(native=NATIVE, spends_currency=NATIVE, spends_amount=5, value=7) == {
        NATIVE: 7
    }
    token = fill_outputs(native=NATIVE, spends_currency=USDC.upper(), spends_amount=9, value=2)
    assert token == {NATIVE: 2, USDC.upper().lower(): 9}
    assert fill_outputs(native=NATIVE, spends_currency=USDC, spends_amount=9, value=0) == {USDC: 9}


def test_committed_sums_per_currency_and_free_is_per_currency() -> None:
    committed = total([{NATIVE: 3, USDC: 10}, {USDC: 5}, {}])
    assert committed == {NATIVE: 3, USDC: 15}
    held = inventories({NATIVE: 10, USDC: 12}, committed, {USDC: 4})
    assert held[NATIVE] == Inventory(10, 3, 0)
    assert (held[USDC].free, held[USDC].owed) == (-3, 4)


def test_a_shortfall_names_each_currency_short_and_ignores_unknown_balances() -> None:
    needs = {NATIVE: 10, USDC: 5}
    assert shortfall({NATIVE: 4, USDC: 5}, needs) == {NATIVE: 6}
    assert shortfall({NATIVE: None, USDC: 1}, needs) == {USDC: 4}
    assert shortfall({NATIVE: 10, USDC: 5}, needs) == {}


def _plan(chain_id: int, order_id: str, amount: int, value: int) -> dict[str, object]:
    deadline = int((START + timedelta(minutes=10)).timestamp())
    payment = Payment("0x" + "12" * 20, USDC, amount)
    return FillPlan(chain_id, order_id, (payment,), (), value, USDC, amount, deadline).to_json()


async def test_the_store_commits_the_outputs_of_requests_in_flight_only(tmp_path: Path) -> None:
    async with chain_world(tmp_path) as world:
        chain_id = world.config.id
        rows = synthetic_requests(6, start=START).requests
        statuses = ["waiting", "depositing", "pending", "submitted", "success", "refund"]
        for index, (row, status) in enumerate(zip(rows, statuses, strict=True)):
            plan = _plan(chain_id, row["order_id"], 10**index, index)
            row.update(destination_chain_id=chain_id, status=status, fill_plan=plan)
        rows[2]["fill_plan"] = None  # quoted before plans: the row's own output
        rows[2].update(destination_currency=NATIVE, amount_out="1000")
        async with world.engine.begin() as connection:
            await connection.execute(insert(Request), rows)
        async with world.sessions() as session:
            in_flight = await inventory.in_flight(session, [chain_id, 7])
            # Outputs read before are not read again (a plan does not change): taken as given.
            known = {rows[1]["id"]: {USDC: 7}, rows[4]["id"]: {USDC: 9}}
            again = await inventory.in_flight(session, [chain_id], known)
    # depositing (10, value 1), pending (its row: 1000 native), submitted (1000, value 3)
    assert in_flight == {
        chain_id: {
            rows[1]["id"]: {NATIVE: 1, USDC: 10},
            rows[2]["id"]: {NATIVE: 1000},
            rows[3]["id"]: {NATIVE: 3, USDC: 1000},
        },
        7: {},
    }
    # ... and one known but no longer in flight (succeeded) is not there.
    assert again == {chain_id: {**in_flight[chain_id], rows[1]["id"]: {USDC: 7}}}


async def test_a_filled_order_stays_committed_until_the_balance_is_read_at_its_fill(
    tmp_path: Path,
) -> None:
    """The view of the inventory: an order in flight commits its output; once filled, it
    still does until the chain's balances are read at or after the fill's block."""
    async with chain_world(tmp_path) as world:
        chain_id = world.config.id
        chains = {ChainId(chain_id): EvmReservedInventory(world.runtime)}
        view = InventoryView(world.sessions, chains, world.metrics)
        (row,) = synthetic_requests(1, start=START).requests
        plan = _plan(chain_id, row["order_id"], 500, 0)
        row.update(destination_chain_id=chain_id, status="pending", fill_plan=plan)
        async with world.engine.begin() as connection:
            await connection.execute(insert(Request), [row])
        world.state.solver_balances = {NATIVE: 10**18, USDC: 2000}
        await view.refresh()
        assert world.state.solver_committed == {USDC: 500}
        assert world.state.solver_free(USDC) == 1500
        fill_block = world.chain.head_block.number + 1
        async with world.sessions() as session, session.begin():
            request = await session.get(Request, row["id"])
            assert request is not None
            request.status = "success"
            session.add(
                RequestTransaction(
                    request_id=row["id"], kind="fill", chain_id=chain_id,
                    tx_hash="0x" + "f1" * 32, block_number=fill_block, status="success",
                    created_at=START,
                )
            )  # fmt: skip
        await view.refresh()
        assert world.state.solver_committed == {USDC: 500}  # read before its block
        world.state.record_head(world.chain.push_head(), 1.0)
        world.state.solver_balances = {NATIVE: 10**18, USDC: 1500}
        await view.refresh()
        assert world.state.solver_committed == {}
        assert world.state.solver_free(USDC) == 1500


async def test_the_store_owes_the_solver_unpaid_deposits_less_app_fees(tmp_path: Path) -> None:
    """Owed: deposits of filled orders not repaid (less the app fees they carry), and those
    whose repayment is on its way; a repaid one is owed no more."""
    async with chain_world(tmp_path) as world:
        origin = world.config.id
        rows = synthetic_requests(4, seed=5, start=START).requests
        async with world.sessions() as session, session.begin():
            for row in rows:
                row.update(status="success", origin_chain_id=origin, destination_chain_id=7)
            await session.execute(insert(Request), rows)
            deposits = []
            for index, row in enumerate(rows):
                deposit = Deposit(
                    chain_id=origin, tx_hash="0x" + f"d{index:063x}", log_index=0, part=0,
                    block_number=90, block_hash="0x" + "be" * 32, order_id=row["order_id"],
                    depositor=row["user_address"], currency=USDC, amount=str(1000 * (index + 1)),
                    state=CONFIRMED, request_id=row["id"], outcome=DepositVerdict.ACCEPTED,
                    created_at=START,
                )  # fmt: skip
                session.add(deposit)
                deposits.append(deposit)
            await session.flush()
            session.add(
                AppFee(
                    request_id=rows[1]["id"], recipient="0x" + "cd" * 20, chain_id=origin,
                    currency=USDC, bps=10, quoted_amount="30", amount_usd_micros=1,
                    state="owed", updated_at=START,
                )
            )  # fmt: skip
            for deposit, state in ((deposits[2], SENDING), (deposits[3], "repaid")):
                session.add(
                    Repayment(
                        deposit_id=deposit.id, chain_id=origin, request_id=deposit.request_id,
                        currency=USDC, amount=str(int(deposit.amount) - 1),
                        recipient="0x" + "12" * 20, batch="repay:1", state=state,
                        created_at=START,
                    )
                )  # fmt: skip
        async with world.sessions() as session:
            owed = await inventory.owed(session)
    # 1000 whole, 2000 less its app fee, 3000 (less 1) on its way; 4000 repaid
    assert owed == {origin: {USDC: 1000 + (2000 - 30) + (3000 - 1)}}
