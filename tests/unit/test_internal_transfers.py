"""Which internal payments of a transaction took effect, from its parity-style call traces."""

from __future__ import annotations

from typing import Any

from crossfill.chains.internal_transfers import InternalPayment, internal_payments

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
