"""The indexer takes an ERC-7683 order from its origin settler's `Open` event before the
deposit the order made is recorded, so the deposit always finds its request (found by the scan
or by a client's hint); a settler's log in another shape is not an order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eth_abi.abi import encode
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from crossfill.domain.erc7683 import OpenedOrder, OriginData
from crossfill.kinds.evm.hint_watch import Hint
from crossfill.kinds.evm.indexer import Indexer
from crossfill.kinds.evm.settler_logs import decode_open, open_event
from crossfill.store.tables import Deposit
from tests.unit.receipt_logs import native_deposit_log
from tests.unit.worker_world import ChainWorld, chain_world

SETTLER = "0x" + "5e" * 20
DESTINATION_SETTLER = "0x" + "de" * 20
TOKEN = "0x" + "70" * 20
USER = "0x" + "0a" * 20
ORDER_ID = "0x" + "7e" * 32
TX = "0x" + "d1" * 32
_RESOLVED = open_event().data_types


def _word(address: str) -> bytes:
    return bytes(12) + bytes.fromhex(address[2:])


def _open_log(number: int, *, outputs: int = 1) -> dict[str, Any]:
    origin_data = OriginData(TOKEN, 40, "0x" + "44" * 20, 900002, 2_000_000_000).encode()
    resolved = (
        USER,
        900001,
        1_900_000_000,
        2_000_000_000,
        bytes.fromhex(ORDER_ID[2:]),
        [(_word(TOKEN), 40, _word("0x" + "44" * 20), 900002)] * outputs,
        [(_word(TOKEN), 50, bytes(32), 900001)],
        [(900002, _word(DESTINATION_SETTLER), origin_data)],
    )
    return {
        "address": SETTLER,
        "topics": [bytes.fromhex(open_event().topic[2:]), bytes.fromhex(ORDER_ID[2:])],
        "data": encode(list(_RESOLVED), [resolved]),
        "logIndex": 1,
        "transactionHash": TX,
        "blockNumber": number,
        "blockHash": "0x" + f"{number:064x}",
    }


def test_an_open_log_decodes_into_the_order_it_opened() -> None:
    order = decode_open(_open_log(7))
    assert order is not None
    assert (order.order_id, order.user, order.input_token, order.input_amount) == (
        ORDER_ID,
        USER,
        TOKEN,
        50,
    )
    assert (order.destination_chain_id, order.destination_settler) == (900002, DESTINATION_SETTLER)
    assert order.output.output_amount == 40 and order.fill_deadline == 2_000_000_000
    assert decode_open(_open_log(7, outputs=2)) is None  # not Crossfill's shape


def _settler_world_indexer(base: ChainWorld) -> tuple[Indexer, list[tuple[str, int]]]:
    """The chain's indexer with an origin settler, and the orders it took: each with how many
    deposits of it were recorded when it was taken."""
    contracts = base.config.contracts.model_copy(update={"erc7683_origin_settler": SETTLER})
    base.config = base.config.model_copy(update={"contracts": contracts})
    indexer = base.indexer(confirmations=1)
    taken: list[tuple[str, int]] = []

    async def take(session: AsyncSession, orders: list[OpenedOrder]) -> None:
        for order in orders:
            recorded = await session.scalars(
                select(Deposit).where(Deposit.order_id == order.order_id)
            )
            taken.append((order.order_id, len(recorded.all())))

    indexer.take_orders = take
    return indexer, taken


async def _deposits_of_order(base: ChainWorld) -> int:
    async with base.sessions() as session:
        recorded = await session.scalars(select(Deposit).where(Deposit.order_id == ORDER_ID))
        return len(recorded.all())


async def test_the_order_is_taken_before_its_deposit_is_recorded(tmp_path: Path) -> None:
    async with chain_world(tmp_path) as base:
        indexer, taken = _settler_world_indexer(base)
        number = base.chain.head_block.number + 1
        depository = base.config.contracts.depository
        base.chain.logs[number] = [
            native_deposit_log(depository, USER, 50, ORDER_ID, mined_in=number, tx_hash=TX),
            _open_log(number),
        ]
        indexer.new_head(base.chain.push_head())
        await indexer.tick()
        assert taken == [(ORDER_ID, 0)]  # taken, while no deposit of it was recorded yet
        assert await _deposits_of_order(base) == 1


async def test_a_hinted_open_transaction_is_taken_before_its_deposit(tmp_path: Path) -> None:
    async with chain_world(tmp_path) as base:
        indexer, taken = _settler_world_indexer(base)
        await indexer.tick()  # the cursor at the head: the hint is found by its receipt alone
        number = base.chain.head_block.number
        depository = base.config.contracts.depository
        base.chain.receipts[TX] = {
            "status": 1,
            "gasUsed": 100_000,
            "effectiveGasPrice": 1,
            "logs": [
                native_deposit_log(depository, USER, 50, ORDER_ID, mined_in=number, tx_hash=TX),
                _open_log(number),
            ],
        }
        assert indexer.hint(Hint(TX, "ip:203.0.113.7"))
        await indexer.tick()
        assert taken == [(ORDER_ID, 0)]
        assert await _deposits_of_order(base) == 1
