"""Which ERC-7683 orders Crossfill refuses, and the order data's encoding."""

from __future__ import annotations

from eth_abi.abi import decode
from eth_utils.crypto import keccak

from crossfill.domain.erc7683 import (
    LEAST_FILL_SECONDS,
    ORDER_DATA_TYPE,
    OUTPUT_NOT_COVERED,
    TOO_LATE,
    UNSERVED,
    CrossfillOrderData,
    OpenedOrder,
    OriginData,
    refusal,
)

SETTLER = "0x" + "22" * 20
NOW = 1_800_000_000


def _order(*, amount: int = 100, deadline: int = NOW + 3600, chain: int = 2) -> OpenedOrder:
    output = OriginData("0x" + "33" * 20, amount, "0x" + "44" * 20, chain, deadline)
    return OpenedOrder(
        order_id="0x" + "11" * 32,
        user="0x" + "55" * 20,
        origin_chain_id=1,
        open_deadline=NOW,
        fill_deadline=deadline,
        input_token="0x" + "66" * 20,
        input_amount=200,
        destination_chain_id=2,
        destination_settler=SETTLER,
        origin_data=output.encode(),
        output=output,
        tx_hash="0x" + "77" * 32,
    )


def test_an_order_covered_in_time_through_our_settler_is_taken() -> None:
    assert refusal(_order(), settler=SETTLER.upper(), quoted_output=100, now_seconds=NOW) is None


def test_refusals_name_their_reason() -> None:
    assert refusal(_order(), settler=None, quoted_output=100, now_seconds=NOW) == UNSERVED
    other = "0x" + "99" * 20
    assert refusal(_order(), settler=other, quoted_output=100, now_seconds=NOW) == UNSERVED
    assert refusal(_order(chain=3), settler=SETTLER, quoted_output=100, now_seconds=NOW) == (
        UNSERVED
    )
    soon = _order(deadline=NOW + LEAST_FILL_SECONDS - 1)
    assert refusal(soon, settler=SETTLER, quoted_output=100, now_seconds=NOW) == TOO_LATE
    assert refusal(_order(), settler=SETTLER, quoted_output=99, now_seconds=NOW) == (
        OUTPUT_NOT_COVERED
    )


def test_order_data_is_its_struct_abi_encoded_under_its_type_hash() -> None:
    data = CrossfillOrderData(
        "0x" + "01" * 20, 5, 900002, "0x" + "02" * 20, "0x" + "03" * 20, 4, "0x" + "04" * 20
    )
    (decoded,) = decode(
        ["(address,uint256,uint256,address,address,uint256,address)"], data.encode()
    )
    assert decoded == (
        "0x" + "01" * 20,
        5,
        900002,
        "0x" + "02" * 20,
        "0x" + "03" * 20,
        4,
        "0x" + "04" * 20,
    )
    type_string = (
        "CrossfillOrderData(address inputToken,uint256 inputAmount,"
        "uint256 destinationChainId,address destinationSettler,address outputToken,"
        "uint256 outputAmount,address recipient)"
    )
    assert keccak(text=type_string) == ORDER_DATA_TYPE
    origin = OriginData("0x" + "05" * 20, 7, "0x" + "06" * 20, 1, 99)
    assert OriginData.decode(origin.encode()) == origin
