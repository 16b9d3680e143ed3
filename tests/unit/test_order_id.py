"""orderId = hashStruct(Order), checked against an independent EIP-712 encoder written here."""

from __future__ import annotations

from typing import Any

from eth_abi.abi import encode
from eth_utils.crypto import keccak
from hypothesis import given
from hypothesis import strategies as st

from crossfill.domain.order import (
    ORDER_TYPES,
    InputRefund,
    Order,
    OrderInput,
    OrderOutput,
    OutputPayment,
)

ATOMIC_DYNAMIC = {"string", "bytes"}


def _dependencies(primary: str, found: set[str] | None = None) -> set[str]:
    found = set() if found is None else found
    if primary in found or primary not in ORDER_TYPES:
        return found
    found.add(primary)
    for field in ORDER_TYPES[primary]:
        _dependencies(field["type"].removesuffix("[]"), found)
    return found


def _encode_type(primary: str) -> str:
    others = sorted(_dependencies(primary) - {primary})
    return "".join(
        name + "(" + ",".join(f"{f['type']} {f['name']}" for f in ORDER_TYPES[name]) + ")"
        for name in [primary, *others]
    )


def _encode_value(type_name: str, value: Any) -> bytes:
    if type_name.endswith("[]"):
        inner = type_name[:-2]
        return keccak(b"".join(_encode_value(inner, item) for item in value))
    if type_name in ORDER_TYPES:
        return _hash_struct(type_name, value)
    if type_name == "string":
        return keccak(text=value)
    if type_name == "bytes":
        return keccak(value)
    return encode([type_name], [value])


def _hash_struct(primary: str, value: dict[str, Any]) -> bytes:
    encoded = keccak(text=_encode_type(primary))
    for field in ORDER_TYPES[primary]:
        encoded += _encode_value(field["type"], value[field["name"]])
    return keccak(encoded)


addresses = st.binary(min_size=20, max_size=20)
amounts = st.integers(min_value=0, max_value=2**256 - 1)
deadlines = st.integers(min_value=0, max_value=2**32 - 1)
chain_names = st.text(min_size=1, max_size=20)


@st.composite
def orders(draw: st.DrawFn) -> Order:
    refund = InputRefund(
        draw(chain_names), draw(addresses), draw(addresses), draw(amounts), draw(deadlines)
    )
    payment = OutputPayment(draw(addresses), draw(addresses), draw(amounts), draw(amounts))
    return Order(
        solver_chain_id=draw(chain_names),
        solver="0x" + draw(addresses).hex(),
        salt=draw(amounts),
        inputs=(OrderInput(draw(chain_names), draw(addresses), draw(amounts), (refund,)),),
        output=OrderOutput(
            chain_id=draw(chain_names),
            payments=(payment,),
            deadline=draw(deadlines),
            calls=tuple(draw(st.lists(st.binary(max_size=40), max_size=2))),
        ),
    )


@given(orders())
def test_order_id_is_the_eip712_hash_struct(order: Order) -> None:
    assert order.order_id() == _hash_struct("Order", order.typed_message())


def test_type_string_matches_the_protocol() -> None:
    assert _encode_type("Order").startswith(
        "Order(string version,string solverChainId,address solver,uint256 salt,Input[] inputs,"
        "Output output,Fee[] fees)Fee(string recipientChainId,bytes recipient,"
    )


def test_order_data_wire_shape_uses_strings() -> None:
    order = Order(
        solver_chain_id="b",
        solver="0x" + "11" * 20,
        salt=7,
        inputs=(OrderInput("a", b"\0" * 20, 10, ()),),
        output=OrderOutput("b", (OutputPayment(b"\1" * 20, b"\0" * 20, 9, 9),), deadline=5),
    )
    wire = order.wire()
    assert wire["salt"] == "7"
    assert wire["inputs"][0]["payment"] == {
        "chainId": "a",
        "currency": "0x" + "00" * 20,
        "amount": "10",
        "weight": "1",
    }
    assert wire["output"]["payments"][0]["recipient"] == "0x" + "01" * 20
