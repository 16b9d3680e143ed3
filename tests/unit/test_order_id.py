"""orderId = hashStruct(Order), checked against an independent EIP-712 encoder written here."""

from __future__ import annotations

import pytest
from eth_account.messages import encode_typed_data
from hypothesis import given
from hypothesis import strategies as st

from crossfill.domain.order import (
    ORDER_HASHER,
    ORDER_TYPES,
    InputRefund,
    Order,
    OrderFee,
    OrderInput,
    OrderOutput,
    OutputPayment,
)


def _library_order_id(order: Order) -> bytes:
    """eth_account's general EIP-712 encoder: the reference the fast hasher must match."""
    signable = encode_typed_data(
        full_message={
            "types": ORDER_TYPES,
            "primaryType": "Order",
            "domain": {},
            "message": order.typed_message(),
        }
    )
    return bytes(signable.body)


addresses = st.binary(min_size=20, max_size=20)
amounts = st.integers(min_value=0, max_value=2**256 - 1)
deadlines = st.integers(min_value=0, max_value=2**32 - 1)
chain_names = st.text(min_size=1, max_size=20)


@st.composite
def refunds(draw: st.DrawFn) -> InputRefund:
    return InputRefund(
        draw(chain_names),
        draw(addresses),
        draw(addresses),
        draw(amounts),
        draw(deadlines),
        draw(st.binary(max_size=40)),
    )


@st.composite
def fees(draw: st.DrawFn) -> OrderFee:
    return OrderFee(
        draw(chain_names), draw(addresses), draw(chain_names), draw(addresses), draw(amounts)
    )


@st.composite
def orders(draw: st.DrawFn) -> Order:
    payments = st.builds(OutputPayment, addresses, addresses, amounts, amounts)
    return Order(
        solver_chain_id=draw(chain_names),
        solver="0x" + draw(addresses).hex(),
        salt=draw(amounts),
        inputs=tuple(
            OrderInput(
                draw(chain_names),
                draw(addresses),
                draw(amounts),
                tuple(draw(st.lists(refunds(), max_size=2))),
                draw(amounts),
            )
            for _ in range(draw(st.integers(min_value=1, max_value=2)))
        ),
        output=OrderOutput(
            chain_id=draw(chain_names),
            payments=tuple(draw(st.lists(payments, min_size=1, max_size=2))),
            deadline=draw(deadlines),
            calls=tuple(draw(st.lists(st.binary(max_size=40), max_size=2))),
            extra_data=draw(st.binary(max_size=40)),
        ),
        fees=tuple(draw(st.lists(fees(), max_size=2))),
    )


@given(orders())
def test_order_id_is_the_eip712_hash_struct(order: Order) -> None:
    assert order.order_id() == _library_order_id(order)


def _small_order(deadline: int) -> Order:
    return Order(
        solver_chain_id="b",
        solver="0x" + "11" * 20,
        salt=7,
        inputs=(OrderInput("a", b"\0" * 20, 10, ()),),
        output=OrderOutput("b", (OutputPayment(b"\1" * 20, b"\0" * 20, 9, 9),), deadline=deadline),
    )


def test_out_of_range_integers_are_refused() -> None:
    order = _small_order(deadline=2**32)
    with pytest.raises(ValueError, match="uint32"):
        order.order_id()


def test_type_string_matches_the_protocol() -> None:
    assert ORDER_HASHER.type_string("Order").startswith(
        "Order(string version,string solverChainId,address solver,uint256 salt,Input[] inputs,"
        "Output output,Fee[] fees)Fee(string recipientChainId,bytes recipient,"
    )


def test_order_data_wire_shape_uses_strings() -> None:
    order = _small_order(deadline=5)
    wire = order.wire()
    assert wire["salt"] == "7"
    assert wire["inputs"][0]["payment"] == {
        "chainId": "a",
        "currency": "0x" + "00" * 20,
        "amount": "10",
        "weight": "1",
    }
    assert wire["output"]["payments"][0]["recipient"] == "0x" + "01" * 20
