"""Reorgs of the destination chain after a fill is mined (`workers.mined_watch`): the fill
must end in the chain whatever the reorg did with it."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from eth_typing import HexStr
from web3 import Web3

from crossfill.devnet.anvil import anvil_rpc
from crossfill.store.tables import SentTransaction
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, final_status, rpc_urls
from tests.e2e.conftest import ServiceThread, StartService, wait_for
from tests.e2e.test_reorg import SMALL, _deposit_for, _filled, _read, _reorg_back_to, _user


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _fill_of(
    http: httpx.Client, devnet: RunningDevnet, destination: Web3
) -> tuple[dict[str, Any], str, str]:
    """A bridge filled: its quote, request id and fill transaction."""
    quote, _ = _deposit_for(http, devnet, _user(devnet), SMALL)
    request_id = quote["steps"][0]["requestId"]
    status = final_status(http, request_id)
    assert status["status"] == "success", status
    (fill_hash,) = status["txHashes"]
    assert destination.eth.get_transaction_receipt(HexStr(fill_hash))["status"] == 1
    return quote, request_id, fill_hash


def _journalled(service: ServiceThread, tx_hash: str) -> SentTransaction:
    rows: list[SentTransaction] = _read(service, SentTransaction)  # type: ignore[arg-type]
    return next(row for row in rows if row.tx_hash == tx_hash)


def test_a_fill_reorged_out_for_good_is_sent_again_and_the_next_fills_go_on(
    service: ServiceThread, devnet: RunningDevnet
) -> None:
    """No node puts the fill back: the user would be left unpaid while the status says
    success, and every later fill of the solver would wait behind its nonce for ever."""
    destination_rpc = rpc_urls(devnet)[DESTINATION]
    destination = Web3(Web3.HTTPProvider(destination_rpc))
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote, request_id, fill_hash = _fill_of(http, devnet, destination)
        mined_in = destination.eth.get_transaction_receipt(HexStr(fill_hash))["blockNumber"]

        _reorg_back_to(destination_rpc, mined_in, reinclude=[])  # the fill is gone
        assert not _filled(devnet, quote)
        assert wait_for(lambda: _filled(devnet, quote), timeout=20)
        receipt = destination.eth.get_transaction_receipt(HexStr(fill_hash))
        assert receipt["status"] == 1  # the same transaction, mined again
        status = http.get("/intents/status/v3", params={"requestId": request_id}).json()
        assert status["status"] == "success" and status["txHashes"] == [fill_hash]

        next_quote, _, _ = _fill_of(http, devnet, destination)  # not stuck behind its nonce
        metrics = http.get("/metrics").text
    assert _filled(devnet, next_quote)
    sent_again = (
        f'crossfill_reorged_transactions_total{{chain_id="{DESTINATION}",outcome="sent_again"}}'
    )
    assert sent_again in metrics, metrics
    assert wait_for(
        lambda: _journalled(service, fill_hash).block_hash == receipt["blockHash"].to_0x_hex(),
        timeout=10,
    )


def test_a_fill_mined_again_in_another_block_is_followed_there(
    service: ServiceThread, devnet: RunningDevnet
) -> None:
    """The usual reorg: the fill comes back a block later. Its journal follows it (what the
    watch checks from then on), and it is not sent again."""
    destination_rpc = rpc_urls(devnet)[DESTINATION]
    destination = Web3(Web3.HTTPProvider(destination_rpc))
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote, _, fill_hash = _fill_of(http, devnet, destination)
    first = destination.eth.get_transaction_receipt(HexStr(fill_hash))
    assert _journalled(service, fill_hash).block_hash == first["blockHash"].to_0x_hex()
    raw = destination.eth.get_raw_transaction(HexStr(fill_hash)).to_0x_hex()
    anvil_rpc(destination_rpc, "anvil_mine", [hex(1)])

    _reorg_back_to(destination_rpc, first["blockNumber"], reinclude=[(raw, 1)])
    again = destination.eth.get_transaction_receipt(HexStr(fill_hash))
    assert again["blockNumber"] == first["blockNumber"] + 1

    assert wait_for(
        lambda: _journalled(service, fill_hash).block_number == again["blockNumber"], timeout=15
    )
    row = _journalled(service, fill_hash)
    assert row.block_hash == again["blockHash"].to_0x_hex() and row.status == "mined"
    assert _filled(devnet, quote)
    time.sleep(0.5)
    assert destination.eth.get_transaction_receipt(HexStr(fill_hash)) == again
