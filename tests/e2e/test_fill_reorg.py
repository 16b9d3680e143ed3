"""Reorgs of the destination chain after a fill is mined (`kinds.evm.mined_watch`): the fill
must end in the chain whatever the reorg did with it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_typing import HexStr
from sqlalchemy import select
from web3 import Web3
from web3.exceptions import TransactionNotFound

from crossfill.devnet.anvil import anvil_rpc
from crossfill.kinds.evm.chain import evm_chains
from crossfill.kinds.evm.mined_watch import MinedWatch
from crossfill.kinds.evm.txmanager import VOID, TxManager
from crossfill.kinds.registry import KINDS
from crossfill.runtime import Runtime
from crossfill.store.migrate import upgrade_async
from crossfill.store.tables import SentTransaction
from crossfill.types import ChainId
from crossfill.workers.runner import utc_now
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, final_status, rpc_urls
from tests.e2e.test_reorg import SMALL, _deposit_for, _filled, _read, _reorg_back_to, _user
from tests.support.service import ServiceThread, StartService, service_settings
from tests.support.waiting import wait_for


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


async def test_a_reverted_transaction_reorged_out_for_good_has_its_nonce_voided(
    devnet: RunningDevnet, tmp_path: Path, database: str | None
) -> None:
    """A signer's reverted transaction (acted on as a revert) that no node puts back: sent
    again, on the new fork it might not revert. Its nonce is used by a void instead, and the
    signer's later transaction, reorged out with it, is mined after the void."""
    settings = service_settings(tmp_path, devnet.deployment_path, database_url=database)
    await upgrade_async(settings.database)
    runtime = Runtime.build(settings, devnet.deployment, kinds=KINDS)
    chain = evm_chains(runtime)[ChainId(DESTINATION)]
    rpc = rpc_urls(devnet)[DESTINATION]
    web3 = Web3(Web3.HTTPProvider(rpc))
    signer = Account.create()
    anvil_rpc(rpc, "anvil_setBalance", [signer.address, hex(10**18)])
    try:
        chain.state.head = await chain.client.head()
        txmanager = TxManager(
            chain.client, chain.state, signer, runtime.sessions, now=utc_now, holder="test"
        )
        await txmanager.hold_signer()
        reverting = await txmanager.send(
            to=chain.config.contracts.filler,
            data=bytes.fromhex("deadbeef"),  # no such function: the Filler reverts
            value=0,
            gas_limit=100_000,
            purpose="test-revert",
            request_id=None,
        )
        later = await txmanager.send(
            to=Account.create().address,
            data=b"",
            value=1,
            gas_limit=21_000,
            purpose="test-later",
            request_id=None,
        )
        # Automined, but a loaded node may answer the receipt a moment after the hash.
        mined = None
        for _ in range(50):
            mined = await txmanager.mined_for(None, "test-revert")
            later_mined = await txmanager.mined_for(None, "test-later")
            if mined is not None and later_mined is not None:
                break
            await asyncio.sleep(0.1)
        assert mined is not None and mined[1]["status"] == 0

        _reorg_back_to(rpc, mined[1]["blockNumber"], reinclude=[])
        assert web3.eth.get_transaction_count(signer.address) == reverting.nonce
        watch = MinedWatch(chain, txmanager, interval_seconds=1, metrics=runtime.metrics)
        watch.new_head(await chain.client.head())
        await watch.tick()

        async with runtime.sessions() as session:
            (void,) = await session.scalars(
                select(SentTransaction).where(SentTransaction.purpose == VOID)
            )
        sent = web3.eth.get_transaction(HexStr(void.tx_hash))
        assert (sent["from"], sent["to"], sent["value"]) == (signer.address, signer.address, 0)
        assert sent["nonce"] == reverting.nonce
        assert web3.eth.get_transaction_receipt(HexStr(void.tx_hash))["status"] == 1
        assert web3.eth.get_transaction_receipt(HexStr(later.tx_hash))["status"] == 1
        with pytest.raises(TransactionNotFound):
            web3.eth.get_transaction_receipt(HexStr(reverting.tx_hash))
        assert web3.eth.get_transaction_count(signer.address) == later.nonce + 1

        watch.new_head(await chain.client.head())
        await watch.tick()
        async with runtime.sessions() as session:
            recorded = await session.get(SentTransaction, void.id)
        assert recorded is not None and recorded.status == "mined"
    finally:
        await runtime.close()
