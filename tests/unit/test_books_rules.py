"""The books' posting rules: every event balanced per chain and currency, and each moving the
accounts it names by the amounts it is given."""

from __future__ import annotations

from collections import defaultdict

import pytest

from crossfill.domain import books
from crossfill.domain.books import Posting, UnbalancedEvent
from crossfill.kinds.evm import gas_keeper
from crossfill.kinds.evm.txmanager import KEY_TRANSFERS

ETH = "0x0000000000000000000000000000000000000000"
USDC = "0x00000000000000000000000000000000000000aa"
SOLVER = "0x00000000000000000000000000000000000000Bb"
ORIGIN, DESTINATION = 31337, 31338


def _by_account(postings: tuple[Posting, ...]) -> dict[tuple[int, str, str], int]:
    sums: dict[tuple[int, str, str], int] = defaultdict(int)
    for posting in postings:
        sums[(posting.chain_id, posting.currency, posting.account)] += posting.amount
    return dict(sums)


def _sums_to_zero(postings: tuple[Posting, ...]) -> bool:
    totals: dict[tuple[int, str], int] = defaultdict(int)
    for posting in postings:
        totals[(posting.chain_id, posting.currency)] += posting.amount
    return all(total == 0 for total in totals.values())


EVENTS = {
    "deposit": books.deposited(ORIGIN, ETH, 10**18, books.DEPOSITORY),
    "v1 deposit": books.deposited(ORIGIN, ETH, 10**18, books.key_account(SOLVER)),
    "fill": books.filled((ORIGIN, USDC, 1_000_000), 3_000, (DESTINATION, USDC, 990_000), SOLVER),
    "fill, origin only": books.filled((ORIGIN, ETH, 5), 0, None, None),
    "refund": books.refunded(ORIGIN, ETH, 10**18, 10**18 - 21_000, books.DEPOSITORY),
    "rebalance out": books.rebalanced_out(ORIGIN, ETH, 10**18, SOLVER),
    "rebalance in": books.rebalanced_in((ORIGIN, USDC, 1_000), 7, (DESTINATION, USDC, 993), SOLVER),
    "repayment": books.repaid(ORIGIN, USDC, 997_000, SOLVER),
    "app-fee claim": books.app_fees_claimed(ORIGIN, USDC, 3_000),
    "gas": books.gas_paid(DESTINATION, ETH, SOLVER, 123_456_789),
    "transfer between keys": books.transferred(ORIGIN, ETH, SOLVER, "0x" + "cc" * 20, 9),
    "opening": books.opened(ORIGIN, ETH, books.DEPOSITORY, 7),
}


@pytest.mark.parametrize("name", sorted(EVENTS))
def test_every_event_is_balanced_per_chain_and_currency(name: str) -> None:
    postings = EVENTS[name]
    assert postings, "an event that moves something posts something"
    assert _sums_to_zero(postings)
    assert _sums_to_zero(books.reversed_(postings))


def test_a_deposit_is_held_and_owed_to_its_user() -> None:
    assert _by_account(EVENTS["deposit"]) == {
        (ORIGIN, ETH, books.DEPOSITORY): 10**18,
        (ORIGIN, ETH, books.OWED_TO_USERS): -(10**18),
    }


def test_a_fill_moves_the_deposit_to_the_solver_and_its_app_fees_to_their_recipients() -> None:
    assert _by_account(EVENTS["fill"]) == {
        (ORIGIN, USDC, books.OWED_TO_USERS): 1_000_000,
        (ORIGIN, USDC, books.OWED_TO_SOLVER): -997_000,
        (ORIGIN, USDC, books.APP_FEES_OWED): -3_000,
        (DESTINATION, USDC, books.key_account(SOLVER)): -990_000,
        (DESTINATION, USDC, books.FILLED): 990_000,
    }


def test_a_refund_keeps_its_gas_and_clears_the_whole_deposit() -> None:
    assert _by_account(EVENTS["refund"]) == {
        (ORIGIN, ETH, books.DEPOSITORY): -(10**18 - 21_000),
        (ORIGIN, ETH, books.OWED_TO_USERS): 10**18,
        (ORIGIN, ETH, books.REFUND_GAS_KEPT): -21_000,
    }


def test_a_repayment_leaves_the_depository_for_the_solver_key() -> None:
    moved = _by_account(EVENTS["repayment"])
    assert moved[(ORIGIN, USDC, books.DEPOSITORY)] == -997_000
    assert moved[(ORIGIN, USDC, books.key_account(SOLVER))] == 997_000
    assert moved[(ORIGIN, USDC, books.OWED_TO_SOLVER)] == 997_000


def test_key_accounts_are_named_by_lowercase_address() -> None:
    assert books.key_account(SOLVER) == "key:" + SOLVER.lower()


def test_gas_is_paid_by_the_key_in_the_native_currency() -> None:
    assert _by_account(EVENTS["gas"]) == {
        (DESTINATION, ETH, books.key_account(SOLVER)): -123_456_789,
        (DESTINATION, ETH, books.GAS): 123_456_789,
    }


def test_an_unbalanced_event_is_refused() -> None:
    with pytest.raises(UnbalancedEvent):
        books.balanced(
            (Posting(ORIGIN, ETH, books.DEPOSITORY, 1), Posting(ORIGIN, USDC, books.GAS, -1))
        )


def test_zero_postings_are_left_out() -> None:
    assert books.opened(ORIGIN, ETH, books.DEPOSITORY, 0) == ()


def test_books_that_agree_with_the_chain_leave_nothing_unexplained() -> None:
    found = books.reconcile(10, 10, seen=0, in_flight=False)
    assert (found.difference, found.explained, found.unexplained) == (0, (), 0)
    assert found.unexplained_cause is None


def test_a_deposit_seen_and_not_yet_confirmed_is_named() -> None:
    found = books.reconcile(15, 10, seen=5, in_flight=False)
    assert found.explained == ((books.SEEN_UNCONFIRMED, 5),)
    assert found.unexplained == 0


def test_a_donation_is_unexplained_and_named() -> None:
    found = books.reconcile(10 + 7, 10, seen=0, in_flight=False)
    assert found.unexplained == 7
    assert found.unexplained_cause == books.UNRECORDED_IN
    missing = books.reconcile(3, 10, seen=0, in_flight=False)
    assert (missing.unexplained, missing.unexplained_cause) == (-7, books.UNRECORDED_OUT)


def test_what_transactions_in_flight_may_move_is_theirs_until_settled() -> None:
    found = books.reconcile(4, 10, seen=1, in_flight=True)
    assert found.explained == ((books.SEEN_UNCONFIRMED, 1), (books.IN_FLIGHT, -7))
    assert found.unexplained == 0


def test_a_transfer_between_keys_moves_it_from_one_to_the_other() -> None:
    sponsor = "0x" + "cc" * 20
    assert _by_account(books.transferred(ORIGIN, ETH, SOLVER, sponsor, 5)) == {
        (ORIGIN, ETH, books.key_account(SOLVER)): -5,
        (ORIGIN, ETH, books.key_account(sponsor)): 5,
    }


def test_gas_top_ups_are_journalled_as_key_transfers() -> None:
    assert gas_keeper.purpose_of(ORIGIN, SOLVER).startswith(KEY_TRANSFERS)


def test_a_move_leaves_the_origin_in_transit_and_arrives_in_the_solver_key_less_its_fee() -> None:
    sent = books.rebalanced_out(ORIGIN, ETH, 1_000, SOLVER)
    arrived = books.rebalanced_in((ORIGIN, ETH, 1_000), 7, (DESTINATION, ETH, 993), SOLVER)
    assert _by_account(sent) == {
        (ORIGIN, ETH, books.key_account(SOLVER)): -1_000,
        (ORIGIN, ETH, books.IN_TRANSIT): 1_000,
    }
    assert _by_account(sent + arrived) == {
        (ORIGIN, ETH, books.key_account(SOLVER)): -1_000,
        (ORIGIN, ETH, books.IN_TRANSIT): 0,
        (ORIGIN, ETH, books.BRIDGE_FEES): 7,
        (ORIGIN, ETH, books.REBALANCED): 993,
        (DESTINATION, ETH, books.key_account(SOLVER)): 993,
        (DESTINATION, ETH, books.REBALANCED): -993,
    }


def test_what_a_move_toward_the_key_brings_is_named_until_booked_arrived() -> None:
    found = books.reconcile(1_993, 1_000, seen=0, in_flight=False, arriving=993)
    assert (found.explained, found.unexplained) == (((books.ARRIVING, 993),), 0)
    more = books.reconcile(2_000, 1_000, seen=0, in_flight=False, arriving=993)
    assert (more.unexplained, more.unexplained_cause) == (7, books.UNRECORDED_IN)
    less = books.reconcile(900, 1_000, seen=0, in_flight=False, arriving=993)
    assert less.explained == () and less.unexplained == -100


def test_more_on_chain_past_the_indexed_block_is_named_deposits_not_read_yet() -> None:
    found = books.reconcile(1_050, 1_000, seen=20, in_flight=False, unread=True)
    assert found.explained == ((books.SEEN_UNCONFIRMED, 20), (books.UNREAD, 30))
    assert found.unexplained == 0
    # Less on chain is never explained by deposits not read.
    less = books.reconcile(990, 1_000, seen=0, in_flight=False, unread=True)
    assert (less.explained, less.unexplained) == ((), -10)
    # Once the indexer has read the block, what is left is unexplained again.
    read = books.reconcile(1_050, 1_000, seen=20, in_flight=False, unread=False)
    assert (read.unexplained, read.unexplained_cause) == (30, books.UNRECORDED_IN)


def test_an_account_not_opened_yet_is_named_so_not_unexplained() -> None:
    # Its books hold only what was posted to it (3) until its opening (its balance then).
    found = books.reconcile(20, 3, seen=0, in_flight=False, opened=False)
    assert found.explained == ((books.NOT_OPENED, 17),)
    assert found.unexplained == 0
