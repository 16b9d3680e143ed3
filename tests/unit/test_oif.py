"""The OIF vocabulary: ERC-7930 addresses, the status mapping, and an escrow order's typed data
read back into the gasless ERC-7683 order its user signs (with eth-account, as a wallet does)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from eth_account import Account

from crossfill.domain import erc7930
from crossfill.domain.erc7683 import ORDER_DATA_TYPE, CrossfillOrderData
from crossfill.domain.erc7683_gasless import GaslessOrder
from crossfill.domain.oif import OrderRefused, escrow_order, order_status
from crossfill.domain.status import RequestStatus
from crossfill.domain.typed_signatures import signer_of
from crossfill.types import Address

VITALIK = "0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045"
SETTLER = "0x" + "5e" * 20
ERC7683_DOCS = Path(__file__).parents[2] / "docs" / "erc7683.md"


def test_an_interoperable_address_reads_and_writes_as_erc_7930_spells_it() -> None:
    # ERC-7930's own example: the address on Ethereum mainnet (chain 1).
    mainnet = erc7930.parse("0x00010000010114D8DA6BF26964AF9D7EED9E03E53415D37AA96045")
    assert mainnet == erc7930.InteropAddress(1, Address(VITALIK))
    assert mainnet.encode() == "0x00010000010114" + VITALIK[2:].lower()
    # Chain 31338 takes two bytes of chain reference; 11155420 three.
    for chain_id, reference in ((31338, "027a6a"), (11155420, "03aa37dc")):
        address = erc7930.InteropAddress.of(chain_id, VITALIK.lower())
        assert address.encode() == "0x00010000" + reference + "14" + VITALIK[2:].lower()
        assert erc7930.parse(address.encode()) == address
    # A chain reference padded with a zero byte still names the chain.
    assert erc7930.parse("0x0001000002000114" + VITALIK[2:]) == mainnet


@pytest.mark.parametrize(
    "text",
    [
        "",
        "0x",
        "0x0001",
        VITALIK,  # a plain address
        "0x00020000010114" + VITALIK[2:],  # version 2
        "0x00010001010114" + VITALIK[2:],  # chain type bip122
        "0x00010000010113" + VITALIK[2:-2],  # a 19-byte address
        "0x0001000001011400" + VITALIK[2:],  # one byte too many
        "0x0001000021" + "01" * 33 + "14" + VITALIK[2:],  # a 33-byte chain reference
        "0x00010000010114" + "zz" * 20,
        "0x" + "00" * 5000,
    ],
)
def test_what_is_not_an_evm_interoperable_address_is_refused(text: str) -> None:
    with pytest.raises(erc7930.NotInteroperable):
        erc7930.parse(text)


def _documented_statuses() -> dict[str, str]:
    """The table of statuses docs/erc7683.md gives clients: each Crossfill status, its OIF
    status."""
    section = ERC7683_DOCS.read_text().split("### Status\n", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| (`[^|]+) \| `(\w+)`", section, re.MULTILINE)
    return {status: oif for statuses, oif in rows for status in re.findall(r"`(\w+)`", statuses)}


def test_every_request_status_has_the_oif_status_the_docs_give_it() -> None:
    statuses = {str(status): str(order_status(status)) for status in RequestStatus}
    assert statuses == _documented_statuses()


def _order(user: str) -> tuple[GaslessOrder, CrossfillOrderData]:
    data = CrossfillOrderData(
        input_token="0x" + "11" * 20,
        input_amount=5_000_000,
        destination_chain_id=31338,
        destination_settler="0x" + "22" * 20,
        output_token="0x" + "33" * 20,
        output_amount=4_900_000,
        recipient="0x" + "44" * 20,
    )
    order = GaslessOrder(
        origin_settler=erc7930.InteropAddress.of(1, SETTLER).address,
        user=user,
        nonce=2**127 + 5,
        origin_chain_id=31337,
        open_deadline=1_900_000_000,
        fill_deadline=1_900_003_600,
        order_data_type=ORDER_DATA_TYPE,
        order_data=data.encode(),
    )
    return order, data


def test_an_escrow_orders_typed_data_is_the_gasless_order_its_user_signed() -> None:
    user = Account.create()
    order, data = _order(user.address)
    domain, message = order.domain(), order.message()
    assert escrow_order(domain, "GaslessCrossChainOrder", message) == (order, data)
    # What a wallet signs from the payload, as given, recovers to the order's user.
    payload = {
        "domain": domain,
        "primaryType": "GaslessCrossChainOrder",
        "message": message,
        "types": order.types(),
    }
    signature = Account.sign_typed_data(user.key, full_message=payload).signature
    assert signer_of(order.signable(), "0x" + bytes(signature).hex()) == user.address
    # The id changes with any term of the order.
    assert order.order_id() != replace(order, nonce=order.nonce + 1).order_id()


@pytest.mark.parametrize(
    ("domain_change", "primary_type", "message_change", "why"),
    [
        ({}, "PermitBatchWitnessTransferFrom", {}, "primaryType"),
        ({"name": "Permit2"}, "GaslessCrossChainOrder", {}, "domain"),
        ({"chainId": 1}, "GaslessCrossChainOrder", {}, "origin chain"),
        ({}, "GaslessCrossChainOrder", {"nonce": str(2**255)}, "nonce: out of range"),
        ({}, "GaslessCrossChainOrder", {"nonce": -1}, "nonce: out of range"),
        ({}, "GaslessCrossChainOrder", {"nonce": True}, "nonce: not an integer"),
        ({}, "GaslessCrossChainOrder", {"openDeadline": str(2**32)}, "openDeadline"),
        ({}, "GaslessCrossChainOrder", {"user": "0x1234"}, "user"),
        ({}, "GaslessCrossChainOrder", {"orderDataType": "0x" + "00" * 32}, "orderDataType"),
        ({}, "GaslessCrossChainOrder", {"orderData": "0x1234"}, "orderData"),
        ({}, "GaslessCrossChainOrder", {"orderData": "0x" + "00" * 2000}, "too long"),
    ],
)
def test_typed_data_that_is_not_a_crossfill_order_is_refused(
    domain_change: dict[str, object],
    primary_type: str,
    message_change: dict[str, object],
    why: str,
) -> None:
    order, _ = _order(Account.create().address)
    with pytest.raises(OrderRefused, match=why):
        escrow_order(
            {**order.domain(), **domain_change},
            primary_type,
            {**order.message(), **message_change},
        )
