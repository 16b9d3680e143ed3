"""`protocolVersion: "v1"`: the deposit is ether paid to the solver through the Receiver with
the order id as its data, and the indexer reads it back from the Receiver's log and the
transaction (sender, value)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from eth_abi.abi import encode
from sqlalchemy import select

from crossfill.contracts.abi import function
from crossfill.kinds.evm.client import TransactionFacts
from crossfill.kinds.evm.depository_logs import RECEIVER
from crossfill.kinds.evm.hint_watch import Hint
from crossfill.kinds.evm.indexer import Indexer
from crossfill.kinds.evm.receiver_logs import decode_receiver_deposit, forwarded_event
from crossfill.quoting.errors import QuoteError
from crossfill.quoting.response import quote_wire
from crossfill.store.tables import Deposit
from crossfill.types import NATIVE_EVM_ADDRESS
from tests.support.quote_fixtures import CHAINS, CONTRACT, USDC, USER, WETH, body, quote
from tests.unit.worker_world import ChainWorld, chain_world

RECEIVER_ADDRESS = "0x" + "4e" * 20
DEPOSITOR = "0x" + "d0" * 20
ORDER_ID = bytes.fromhex("ab" * 32)


def _log(data: bytes, *, address: str = RECEIVER_ADDRESS) -> dict[str, Any]:
    return {
        "address": address,
        "topics": [forwarded_event().topic],
        "data": "0x" + encode(["bytes"], [data]).hex(),
        "transactionHash": "0x" + "11" * 32,
        "logIndex": 3,
        "blockNumber": 7,
        "blockHash": "0x" + "22" * 32,
    }


def _tx(data: bytes, *, to: str = RECEIVER_ADDRESS, value: int = 5 * 10**16) -> TransactionFacts:
    return TransactionFacts(sender=DEPOSITOR, to=to, value=value, data=data)


@pytest.mark.parametrize(
    "calldata",
    [ORDER_ID, function("Receiver", "forward").encode(ORDER_ID)],
    ids=["fallback", "forward"],
)
def test_ether_sent_to_the_receiver_with_an_order_id_is_a_deposit_by_its_sender(
    calldata: bytes,
) -> None:
    deposit = decode_receiver_deposit(_log(ORDER_ID), _tx(calldata), RECEIVER_ADDRESS)
    assert deposit is not None
    assert (deposit.order_id, deposit.depositor, deposit.amount) == (
        "0x" + ORDER_ID.hex(),
        DEPOSITOR,
        5 * 10**16,
    )
    assert (deposit.currency, deposit.paid_to, deposit.log_index) == (
        NATIVE_EVM_ADDRESS,
        RECEIVER,
        3,
    )


@pytest.mark.parametrize(
    ("log", "tx"),
    [
        (_log(ORDER_ID), _tx(ORDER_ID, to="0x" + "99" * 20)),  # through another contract
        (_log(ORDER_ID), _tx(ORDER_ID, value=0)),
        (_log(b"\x01" * 31), _tx(b"\x01" * 31)),  # not an order id
        (_log(bytes(16) + b"\x01" * 16), _tx(bytes(16) + b"\x01" * 16)),  # reserved ids
        (_log(ORDER_ID, address="0x" + "98" * 20), _tx(ORDER_ID)),  # another contract's log
        (_log(ORDER_ID), _tx(bytes.fromhex("cd" * 32))),  # the log is not this call's
    ],
    ids=["via-contract", "no-value", "short", "reserved", "other-emitter", "mismatch"],
)
def test_anything_else_forwarded_is_not_a_deposit(
    log: dict[str, Any], tx: TransactionFacts
) -> None:
    assert decode_receiver_deposit(log, tx, RECEIVER_ADDRESS) is None


def test_a_v1_quote_deposits_ether_to_the_receiver_with_the_order_id() -> None:
    v1 = quote(body(protocolVersion="v1"))
    assert v1.paid_to_solver
    wire = quote_wire(v1, allowance=None, user_balance=None)
    (step,) = wire["steps"]
    (item,) = step["items"]
    assert step["id"] == "deposit" and step["kind"] == "transaction"
    assert item["data"]["to"] == v1.origin.contracts.receiver.lower() == CONTRACT
    assert item["data"]["data"] == v1.order_id
    assert item["data"]["value"] == str(v1.split.amount_in)
    assert item["data"]["from"] == USER
    assert wire["protocol"]["v2"]["paymentDetails"]["depository"] == CONTRACT


def test_a_v2_quote_deposits_into_the_depository() -> None:
    v2 = quote(body(protocolVersion="v2"))
    (step,) = quote_wire(v2, allowance=None, user_balance=None)["steps"]
    assert not v2.paid_to_solver
    assert step["items"][0]["data"]["data"] != v2.order_id  # depositNative(depositor, id)


@pytest.mark.parametrize(
    "fields",
    [
        {"originCurrency": USDC, "destinationCurrency": USDC, "amount": "100000000"},
        {"destinationChainId": CHAINS[0], "destinationCurrency": WETH},  # same chain: a wrap
    ],
    ids=["erc20", "same-chain"],
)
def test_v1_where_it_cannot_hold_is_refused_by_name(fields: dict[str, object]) -> None:
    with pytest.raises(QuoteError) as refused:
        quote(body(protocolVersion="v1", **fields))
    assert refused.value.error_code == "UNSUPPORTED_EXECUTION_TYPE"
    assert "protocolVersion v1" in refused.value.message


@pytest.fixture
async def indexed(tmp_path: Path) -> AsyncIterator[tuple[ChainWorld, Indexer]]:
    async with chain_world(tmp_path) as base:
        indexer = Indexer(
            base.runtime, base.sessions, now=base.clock, interval_seconds=0.1, metrics=base.metrics
        )
        yield base, indexer


async def test_the_indexer_records_a_receiver_deposit_by_its_sender(
    indexed: tuple[ChainWorld, Indexer],
) -> None:
    base, indexer = indexed
    receiver = base.config.contracts.receiver
    tx_hash = "0x" + "11" * 32
    log = {**_log(ORDER_ID, address=receiver), "blockNumber": base.chain.head_block.number}
    base.chain.mine(tx_hash, logs=[log])
    base.chain.sent_facts[tx_hash] = _tx(ORDER_ID, to=receiver.lower())
    indexer.hint(Hint(tx_hash, "ip:127.0.0.1"))
    await indexer.tick()
    async with base.sessions() as session:
        (deposit,) = await session.scalars(select(Deposit))
    assert (deposit.tx_hash, deposit.order_id, deposit.depositor) == (
        tx_hash,
        "0x" + ORDER_ID.hex(),
        DEPOSITOR,
    )
    assert (deposit.paid_to, deposit.amount, deposit.currency) == (
        RECEIVER,
        str(5 * 10**16),
        NATIVE_EVM_ADDRESS,
    )
