"""A deposit reorged out of the origin chain before it is final is never filled."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
from eth_account import Account
from sqlalchemy import select
from web3 import Web3

from crossfill.devnet.anvil import anvil_rpc, set_native_balance
from crossfill.devnet.deploy import contract_at
from crossfill.store.db import create_engine, session_factory
from crossfill.store.tables import Deposit
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, NATIVE, ORIGIN, request_quote, rpc_urls
from tests.e2e.conftest import ServiceThread, StartService, wait_for
from tests.e2e.wallet import execute_steps

ETH = 10**18


@pytest.fixture
def service(start_service: StartService) -> ServiceThread:
    return start_service(run_workers=True)


def _deposit_states(service: ServiceThread) -> dict[str, str]:
    async def read() -> dict[str, str]:
        engine = create_engine(service.settings.database)
        try:
            async with session_factory(engine)() as session:
                rows = await session.scalars(select(Deposit))
                return {row.tx_hash: row.state for row in rows}
        finally:
            await engine.dispose()

    return asyncio.run(read())


def test_deposit_reorged_out_before_confirmation_is_not_filled(
    service, devnet: RunningDevnet
) -> None:
    user = Account.create()
    origin_rpc = rpc_urls(devnet)[ORIGIN]
    set_native_balance(origin_rpc, user.address, 100 * ETH)
    # Worth about $120,000 at the devnet price: the policy wants 4 confirmations.
    body = {
        "user": user.address,
        "recipient": Account.create().address,
        "originChainId": ORIGIN,
        "destinationChainId": DESTINATION,
        "originCurrency": NATIVE,
        "destinationCurrency": NATIVE,
        "amount": str(40 * ETH),
        "tradeType": "EXACT_INPUT",
    }
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(http, body)
        request_id = quote["steps"][0]["requestId"]
        deposit_hash = execute_steps(quote, user, rpc_urls(devnet))["deposit"]

        def status() -> dict[str, Any]:
            record: dict[str, Any] = http.get(
                "/intents/status/v3", params={"requestId": request_id}
            ).json()
            return record

        assert wait_for(lambda: status()["inTxHashes"] == [deposit_hash], timeout=15)
        assert status()["status"] == "waiting"

        anvil_rpc(origin_rpc, "anvil_reorg", [1, []])  # the deposit's block is replaced
        anvil_rpc(origin_rpc, "anvil_mine", [hex(6)])  # deep enough that it would be final

        assert wait_for(lambda: _deposit_states(service).get(deposit_hash) == "reorged", timeout=15)
        time.sleep(1)  # a solver tick, had anything been left to fill
        final = status()
    assert final["status"] == "waiting"
    assert final["inTxHashes"] == []
    destination = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION]))
    filler = contract_at(destination, "Filler", devnet.deployment.chains[1].contracts.filler)
    assert (
        filler.functions.filled(bytes.fromhex(quote["protocol"]["v2"]["orderId"][2:])).call()
        is False
    )
