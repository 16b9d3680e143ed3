"""The RFQ's pure rules: which registered solver is asked, which bid is valid (its EIP-712
signature recovered with eth-account), and which wins."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from eth_account import Account
from eth_account.messages import encode_typed_data

from crossfill.domain.rfq import (
    Bid,
    BidRefusal,
    Offer,
    bid_refusal,
    request_typed_data,
    winner,
)
from crossfill.domain.solvers import (
    Ask,
    Ineligible,
    RegisteredSolver,
    SolverRoute,
    bond_covers,
    standing_refusal,
)
from crossfill.types import Address

USDC_A = "0x" + "aa" * 20
USDC_B = "0x" + "bb" * 20
BOND = "0x" + "cc" * 20
NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)
SOLVER = Account.create()
STRANGER = Account.create()
ASK = Ask(
    quote_id="0x" + "11" * 32,
    origin_chain_id=1,
    destination_chain_id=2,
    currency_in=USDC_A,
    currency_out=USDC_B,
    amount_in=1_000_000_000,
    recipient="0x" + "22" * 20,
    expiry=int(NOW.timestamp()) + 300,
    notional_usd_micros=1_000_000_000,
)
REGISTERED = RegisteredSolver(
    id=1,
    name="alpha",
    evm_address=Address(SOLVER.address),
    addresses={"evm": SOLVER.address.lower()},
    bid_url="http://127.0.0.1:9/bid",
    routes=(SolverRoute(1, 2, frozenset({USDC_A, USDC_B})),),
    max_size_usd_micros=10_000_000_000,
    reputation=100,
    cooldown_until=None,
)


def signed_bid(account: object, *, output: int = 999_000_000, solver: str | None = None) -> Bid:
    assert hasattr(account, "address") and hasattr(account, "sign_message")
    unsigned = Bid(
        quote_id=ASK.quote_id,
        solver=Address(solver or account.address),
        output=output,
        expiry=ASK.expiry + 60,
        signature="0x",
    )
    signed = account.sign_message(unsigned.signable(ASK.destination_chain_id, BOND))
    return replace(unsigned, signature="0x" + bytes(signed.signature).hex())


def refusal(bid: Bid) -> BidRefusal | None:
    return bid_refusal(bid, ASK, registered=REGISTERED.evm_address, solver_bond=BOND)


def test_a_solver_on_its_route_within_its_size_and_standing_is_asked() -> None:
    assert standing_refusal(REGISTERED, ASK, now=NOW, min_reputation=50) is None


@pytest.mark.parametrize(
    ("solver", "ask", "why"),
    [
        (REGISTERED, replace(ASK, destination_chain_id=3), Ineligible.NO_ROUTE),
        (REGISTERED, replace(ASK, origin_chain_id=2, destination_chain_id=1), Ineligible.NO_ROUTE),
        (REGISTERED, replace(ASK, currency_out="0x" + "dd" * 20), Ineligible.NO_ROUTE),
        (REGISTERED, replace(ASK, notional_usd_micros=10_000_000_001), Ineligible.TOO_LARGE),
        (
            replace(REGISTERED, cooldown_until=NOW + timedelta(seconds=1)),
            ASK,
            Ineligible.COOLING_DOWN,
        ),
        (replace(REGISTERED, reputation=49), ASK, Ineligible.LOW_REPUTATION),
    ],
)
def test_a_solver_off_route_too_small_cooling_or_ill_reputed_is_not_asked(
    solver: RegisteredSolver, ask: Ask, why: Ineligible
) -> None:
    assert standing_refusal(solver, ask, now=NOW, min_reputation=50) is why


def test_a_cooldown_over_is_no_bar() -> None:
    cooled = replace(REGISTERED, cooldown_until=NOW)
    assert standing_refusal(cooled, ASK, now=NOW, min_reputation=50) is None


def test_the_bond_must_cover_what_is_open_plus_the_order() -> None:
    assert bond_covers(bond_usd_micros=10, outstanding_usd_micros=4, order_usd_micros=6)
    assert not bond_covers(bond_usd_micros=10, outstanding_usd_micros=5, order_usd_micros=6)


def test_a_bid_signed_by_the_registered_solver_is_valid() -> None:
    assert refusal(signed_bid(SOLVER)) is None


def test_a_bid_signed_by_another_key_is_refused() -> None:
    # Claims the registered solver's address, signed by a stranger's key.
    assert refusal(signed_bid(STRANGER, solver=SOLVER.address)) is BidRefusal.BAD_SIGNATURE


def test_a_bid_from_an_unregistered_address_is_refused() -> None:
    assert refusal(signed_bid(STRANGER)) is BidRefusal.WRONG_SOLVER


def test_a_tampered_bid_is_refused() -> None:
    bid = signed_bid(SOLVER)
    assert refusal(replace(bid, output=bid.output + 1)) is BidRefusal.BAD_SIGNATURE


def test_a_high_s_twin_of_a_valid_signature_is_refused() -> None:
    bid = signed_bid(SOLVER)
    raw = bytes.fromhex(bid.signature[2:])
    n = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
    s = n - int.from_bytes(raw[32:64], "big")
    twin = raw[:32] + s.to_bytes(32, "big") + bytes([raw[64] ^ 1])
    assert refusal(replace(bid, signature="0x" + twin.hex())) is BidRefusal.BAD_SIGNATURE


@pytest.mark.parametrize("signature", ["0x", "0x" + "00" * 65, "not hex", "0x" + "ff" * 65])
def test_a_malformed_signature_is_refused(signature: str) -> None:
    assert refusal(replace(signed_bid(SOLVER), signature=signature)) is BidRefusal.BAD_SIGNATURE


def test_a_bid_for_another_quote_or_expiring_before_the_quote_is_refused() -> None:
    other = replace(signed_bid(SOLVER), quote_id="0x" + "33" * 32)
    assert refusal(other) is BidRefusal.WRONG_QUOTE
    short = Bid(ASK.quote_id, Address(SOLVER.address), 1, ASK.expiry - 1, "0x")
    signed = SOLVER.sign_message(short.signable(ASK.destination_chain_id, BOND))
    short = replace(short, signature="0x" + bytes(signed.signature).hex())
    assert refusal(short) is BidRefusal.EXPIRES_TOO_SOON


def test_a_bid_signed_for_another_chain_is_refused() -> None:
    bid = signed_bid(SOLVER)
    moved = bid_refusal(
        bid, replace(ASK, destination_chain_id=3), registered=REGISTERED.evm_address,
        solver_bond=BOND,
    )  # fmt: skip
    assert moved is BidRefusal.BAD_SIGNATURE


def test_a_zero_output_is_refused() -> None:
    assert refusal(signed_bid(SOLVER, output=0)) is BidRefusal.BAD_OUTPUT


def test_the_request_is_signed_typed_data_anyone_recovers() -> None:
    operator = Account.create()
    typed = request_typed_data(ASK, BOND)
    signed = operator.sign_message(encode_typed_data(full_message=typed))
    recovered = Account.recover_message(
        encode_typed_data(full_message=typed), signature=signed.signature
    )
    assert recovered == operator.address
    assert typed["domain"] == {
        "name": "CrossfillRfq",
        "version": "1",
        "chainId": 2,
        "verifyingContract": BOND,
    }


def _offer(rank: int, output: int) -> Offer:
    bid = Bid(ASK.quote_id, Address(SOLVER.address), output, ASK.expiry, "0x")
    return Offer(solver_id=rank, solver_name=f"s{rank}", bid=bid, rank=rank)


def test_the_best_bid_wins_only_above_the_operator_price() -> None:
    offers = [_offer(0, 100), _offer(1, 105), _offer(2, 103)]
    best = winner(offers, operator_output=104)
    assert best is not None and best.rank == 1
    assert winner(offers, operator_output=105) is None
    assert winner([], operator_output=0) is None


def test_a_tie_goes_to_the_solver_asked_first() -> None:
    best = winner([_offer(1, 105), _offer(0, 105)], operator_output=1)
    assert best is not None and best.rank == 0
