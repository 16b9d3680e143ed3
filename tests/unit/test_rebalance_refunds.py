"""A move the bridge refunded, booked (`kinds.evm.rebalancer.refund_paid`,
`domain.books.rebalance_refunded`): what the refund transactions paid the solver on the origin
is read from their receipts (a Depository's ether payout, a token's transfer), a refund not on
the node yet is waited for, an origin that does not answer raises for the rebalancer's
backoff; the posting clears the move's `in_transit` into the solver key and the bridge's fee."""

from __future__ import annotations

from pathlib import Path

import pytest

from crossfill.domain import books
from crossfill.errors import ChainUnreachable
from crossfill.kinds.evm.rebalancer import refund_paid
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.unit.receipt_logs import call_executed_log, transfer_log
from tests.unit.worker_world import chain_world

SOLVER = "0x" + "50" * 20
PEER_DEPOSITORY = "0x" + "de" * 20
TOKEN = "0x" + "70" * 20
OTHER = "0x" + "0f" * 20
REFUND, SECOND = "0x" + "01" * 32, "0x" + "02" * 32


async def test_what_the_refund_paid_the_solver_is_read_from_its_receipts(tmp_path: Path) -> None:
    async with chain_world(tmp_path) as world:
        chain = world.chain
        chain.mine(
            REFUND,
            logs=[
                call_executed_log(PEER_DEPOSITORY, SOLVER, b"", 990),
                call_executed_log(PEER_DEPOSITORY, OTHER, b"", 5),  # someone else's
                transfer_log(TOKEN, PEER_DEPOSITORY, SOLVER, 77),
            ],
        )
        assert await refund_paid(world.runtime, [REFUND], NATIVE_EVM_ADDRESS, SOLVER) == 990
        assert await refund_paid(world.runtime, [REFUND], TOKEN, SOLVER) == 77
        # One of its transactions not on the node yet: waited for.
        assert await refund_paid(world.runtime, [REFUND, SECOND], TOKEN, SOLVER) is None
        chain.mine(SECOND, status=0, logs=[transfer_log(TOKEN, PEER_DEPOSITORY, SOLVER, 9)])
        assert await refund_paid(world.runtime, [REFUND, SECOND], TOKEN, SOLVER) == 77
        chain.fail("receipt", ChainUnreachable("node: ConnectError"))
        with pytest.raises(ChainUnreachable):
            await refund_paid(world.runtime, [REFUND], TOKEN, SOLVER)
        assert await refund_paid(world.runtime, [REFUND], TOKEN, SOLVER) == 77  # answered again


def test_a_refund_clears_the_move_in_transit_into_the_solver_key_and_the_bridge_fee() -> None:
    postings = books.rebalance_refunded((7, TOKEN, 1_000), 990, SOLVER)
    by_account = {posting.account: posting.amount for posting in postings}
    assert by_account == {
        books.IN_TRANSIT: -1_000,
        books.key_account(SOLVER): 990,
        books.BRIDGE_FEES: 10,
    }
    assert {(posting.chain_id, posting.currency) for posting in postings} == {(7, TOKEN)}
