"""kill -9 the service while a deposit-address sweep is in flight: after a restart the funds
are swept once and the request is filled once."""

from __future__ import annotations

from pathlib import Path

import httpx
from eth_account import Account
from sqlalchemy import select
from web3 import Web3

from crossfill.devnet import accounts
from crossfill.devnet.anvil import anvil_rpc
from crossfill.devnet.deploy import contract_at
from crossfill.kinds.evm.config import evm_chains
from crossfill.store.tables import SentTransaction
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    balance,
    final_status,
    funded_user,
    request_quote,
)
from tests.e2e.test_deposit_addresses import ETH, _request
from tests.support.database import rows_in
from tests.support.service import ServiceProcess, service_settings
from tests.support.waiting import wait_for
from tests.support.wallets.evm import broadcast_item


def _sweeps(service: ServiceProcess, request_id: str) -> list[SentTransaction]:
    return rows_in(
        service.database,
        select(SentTransaction).where(
            SentTransaction.request_id == request_id, SentTransaction.purpose == "sweep"
        ),
    )


def test_sweep_in_flight_survives_kill_9_and_is_swept_and_filled_once(
    devnet: RunningDevnet, tmp_path: Path
) -> None:
    service = ServiceProcess(service_settings(tmp_path, devnet.deployment_path))
    service.start()
    origin = evm_chains(devnet.deployment)[0]
    web3 = Web3(Web3.HTTPProvider(origin.rpc_url))
    solver = accounts.solver().address
    user, recipient = funded_user(devnet), Account.create().address
    try:
        with httpx.Client(base_url=service.base_url, timeout=10) as http:
            quote = request_quote(http, _request(user, recipient).wire())
            (step,) = quote["steps"]
            request_id, address = step["requestId"], step["depositAddress"]
            anvil_rpc(origin.rpc_url, "evm_setAutomine", [False])  # the sweep stays in flight
            broadcast_item(web3, user, step["items"][0]["data"])
            anvil_rpc(origin.rpc_url, "evm_mine", [])  # the user's transfer, alone
            solver_nonce = web3.eth.get_transaction_count(solver)
            assert wait_for(
                lambda: any(row.status == "broadcast" for row in _sweeps(service, request_id)),
                timeout=30,
            )
            service.kill()
            service.start()
            anvil_rpc(origin.rpc_url, "evm_setAutomine", [True])
            anvil_rpc(origin.rpc_url, "evm_mine", [])
            status = final_status(http, request_id, timeout=60)
    finally:
        anvil_rpc(origin.rpc_url, "evm_setAutomine", [True])
        service.stop()

    assert status["status"] == "success", status
    sweeps = _sweeps(service, request_id)
    assert {row.nonce for row in sweeps} == {solver_nonce}
    assert [row.status for row in sweeps].count("mined") == 1
    factory = origin.contracts.deposit_address_factory
    assert factory is not None
    swept = contract_at(web3, "DepositAddressFactory", factory).events.Swept.get_logs(from_block=0)
    assert [log["args"]["depositAddress"].lower() for log in swept].count(address.lower()) == 1
    assert balance(devnet, ORIGIN, NATIVE, address) == 0
    paid = balance(devnet, DESTINATION, NATIVE, recipient)
    assert paid == int(quote["details"]["currencyOut"]["amount"])
    assert len(status["txHashes"]) == 1  # one fill
    order_id = bytes.fromhex(quote["protocol"]["v2"]["orderId"][2:])
    depository = contract_at(web3, "Depository", origin.contracts.depository)
    deposits = depository.events.NativeDeposit.get_logs(from_block=0)
    assert [log["args"]["amount"] for log in deposits if log["args"]["id"] == order_id] == [
        ETH // 10
    ]
