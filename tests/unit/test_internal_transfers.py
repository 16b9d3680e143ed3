"""Which internal payments of a transaction took effect, from its parity-style call traces or
from geth's call frames: the same payments, numbered alike."""

from __future__ import annotations

from typing import Any

from crossfill.kinds.evm.internal_transfers import (
    InternalPayment,
    call_frame_payments,
    internal_payments,
)

WALLET, MULTICALL, ADDRESS, OTHER = (
    "0x" + "a1" * 20,
    "0x" + "b2" * 20,
    "0x" + "c3" * 20,
    "0x" + "d4" * 20,
)


def _call(path: list[int], sender: str, to: str, value: int, **more: Any) -> dict[str, Any]:
    return {
        "type": "call",
        "traceAddress": path,
        "action": {"callType": more.pop("call_type", "call"), "from": sender, "to": to,
                   "value": hex(value), "input": "0x"},
        **more,
    }  # fmt: skip


def test_a_wallet_paying_through_a_contract_is_an_internal_payment() -> None:
    traces = [_call([], WALLET, MULTICALL, 5), _call([0], MULTICALL, ADDRESS, 5)]
    assert internal_payments(traces) == [InternalPayment(1, MULTICALL, ADDRESS, 5)]


def test_the_transactions_own_transfer_and_calls_without_value_are_not() -> None:
    traces = [
        _call([], WALLET, ADDRESS, 7),
        _call([0], ADDRESS, OTHER, 0),
        _call([1], MULTICALL, OTHER, 3, call_type="delegatecall"),
        _call([2], MULTICALL, OTHER, 0, call_type="staticcall"),
    ]
    assert internal_payments(traces) == []


def test_a_payment_under_a_frame_that_reverted_did_not_happen() -> None:
    """The inner call's own trace has no error: its parent's revert undid it."""
    traces = [
        _call([], WALLET, MULTICALL, 9),
        _call([0], MULTICALL, MULTICALL, 4, error="Reverted"),
        _call([0, 0], MULTICALL, ADDRESS, 4),
        _call([1], MULTICALL, ADDRESS, 5),
    ]
    assert internal_payments(traces) == [InternalPayment(3, MULTICALL, ADDRESS, 5)]
    everything_reverted = [{**traces[0], "error": "Reverted"}, *traces[1:]]
    assert internal_payments(everything_reverted) == []


def test_ordinals_do_not_depend_on_who_is_paid() -> None:
    traces = [
        _call([], WALLET, MULTICALL, 9),
        _call([0], MULTICALL, OTHER, 4),
        _call([1], MULTICALL, ADDRESS, 5),
    ]
    assert [p.ordinal for p in internal_payments(traces)] == [1, 2]


def _suicide(path: list[int], contract: str, beneficiary: str, balance: int) -> dict[str, Any]:
    return {
        "type": "suicide",
        "traceAddress": path,
        "action": {"address": contract, "refundAddress": beneficiary, "balance": hex(balance)},
        "result": None,
    }


def _frame(
    kind: str, sender: str, to: str, value: int | None, *calls: dict[str, Any], **more: Any
) -> dict[str, Any]:
    frame = {"type": kind, "from": sender, "to": to, "calls": list(calls), **more}
    if value is not None:
        frame["value"] = hex(value)
    return frame  # fmt: skip


def test_a_self_destruct_pays_its_balance_numbered_after_the_calls() -> None:
    """A contract created and destroyed at once hands its balance over: a creation, then a
    self-destruct (anvil's traces of `PUSH20 address SELFDESTRUCT` sent with value). Its
    number comes after every call's, so the calls keep theirs."""
    created = {"type": "create", "traceAddress": [], "action": {"from": WALLET, "value": hex(6)}}
    assert internal_payments([created, _suicide([0], MULTICALL, ADDRESS, 6)]) == [
        InternalPayment(0, MULTICALL, ADDRESS, 6)
    ]
    traces = [
        _call([], WALLET, MULTICALL, 9),
        _suicide([0], MULTICALL, ADDRESS, 4),
        _call([1], MULTICALL, OTHER, 5),
        _suicide([2], OTHER, ADDRESS, 0),  # nothing left to hand over
    ]
    assert internal_payments(traces) == [
        InternalPayment(1, MULTICALL, OTHER, 5),
        InternalPayment(2, MULTICALL, ADDRESS, 4),
    ]


def test_geths_call_frames_give_what_parity_traces_give() -> None:
    """One transaction drawn both ways: a wallet paying through a contract, a payment undone
    by its frame's revert, a delegate call's value (the caller's, not moved), a
    self-destruct."""
    traces = [
        _call([], WALLET, MULTICALL, 20),
        _call([0], MULTICALL, MULTICALL, 4, error="Reverted"),
        _call([0, 0], MULTICALL, ADDRESS, 4),
        _call([1], MULTICALL, OTHER, 7, call_type="delegatecall"),
        _call([2], MULTICALL, ADDRESS, 5),
        _suicide([3], MULTICALL, ADDRESS, 11),
    ]
    frame = _frame(
        "CALL", WALLET, MULTICALL, 20,
        _frame("CALL", MULTICALL, MULTICALL, 4, _frame("CALL", MULTICALL, ADDRESS, 4),
               error="execution reverted"),
        _frame("DELEGATECALL", MULTICALL, OTHER, 7),
        _frame("STATICCALL", MULTICALL, OTHER, None),
        _frame("CALL", MULTICALL, ADDRESS, 5),
        _frame("SELFDESTRUCT", MULTICALL, ADDRESS, 11),
    )  # fmt: skip
    expected = [
        InternalPayment(3, MULTICALL, ADDRESS, 5),
        InternalPayment(4, MULTICALL, ADDRESS, 11),
    ]
    assert internal_payments(traces) == expected
    assert call_frame_payments(frame) == expected
    assert call_frame_payments({**frame, "error": "out of gas"}) == []


def test_a_plain_transfer_has_no_internal_payment_in_either_shape() -> None:
    assert call_frame_payments(_frame("CALL", WALLET, ADDRESS, 7)) == []
    assert internal_payments([_call([], WALLET, ADDRESS, 7)]) == []


def test_a_payment_at_the_bottom_of_the_deepest_calls_is_read() -> None:
    """1,024 nested calls (the EVM's limit; one cheap transaction makes them) with the
    innermost paying: the frames are walked without recursion."""
    frame = _frame("CALL", MULTICALL, ADDRESS, 5)
    for _ in range(1_023):
        frame = _frame("CALL", MULTICALL, MULTICALL, 0, frame)
    frame = _frame("CALL", WALLET, MULTICALL, 5, frame)
    assert call_frame_payments(frame) == [InternalPayment(1, MULTICALL, ADDRESS, 5)]


def test_a_revert_halfway_down_the_deepest_calls_undoes_what_lies_below_it() -> None:
    """1,024 nested calls paying one wei each, the 500th reverting: the calls above it
    stand, those below do not, in whatever order the traces come."""
    traces = [_call([], WALLET, MULTICALL, 1)]
    for depth in range(1, 1_024):
        error = {"error": "Reverted"} if depth == 500 else {}
        traces.append(_call([0] * depth, MULTICALL, MULTICALL, 1, **error))
    standing = [InternalPayment(depth, MULTICALL, MULTICALL, 1) for depth in range(1, 500)]
    assert internal_payments(traces) == standing
    assert internal_payments(traces[::-1]) == [
        InternalPayment(1023 - depth, MULTICALL, MULTICALL, 1) for depth in range(499, 0, -1)
    ]
