"""A fill that sits unmined is replaced with higher fees; exactly one version lands."""

from __future__ import annotations

import httpx
from eth_typing import HexStr
from web3 import Web3

from crossfill.devnet.anvil import anvil_rpc
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    balance,
    final_status,
    funded_user,
    journal,
    native_bridge,
    request_quote,
    rpc_urls,
)
from tests.support.service import StartService
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps


def test_stuck_fill_is_replaced_and_only_one_version_lands(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    chains = [
        chain.model_copy(update={"replace_stuck_after_seconds": 1})
        for chain in devnet.deployment.chains
    ]
    service = start_service(
        devnet.deployment.model_copy(update={"chains": chains}), run_workers=True
    )
    destination_rpc = rpc_urls(devnet)[DESTINATION]
    user = funded_user(devnet)
    recipient = user.address
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(
            http,
            native_bridge(user.address),
        )
        request_id = quote["steps"][-1]["requestId"]
        before = balance(devnet, DESTINATION, NATIVE, recipient)
        anvil_rpc(destination_rpc, "evm_setAutomine", [False])  # nothing mines: the fill waits
        try:
            execute_steps(quote, user, rpc_urls(devnet))
            assert final_status(http, request_id, until=frozenset({"submitted"}))
            assert wait_for(
                lambda: any(row.status == "replaced" for row in journal(service, request_id)),
                timeout=20,
            )
            anvil_rpc(destination_rpc, "evm_mine", [])
        finally:
            anvil_rpc(destination_rpc, "evm_setAutomine", [True])
        status = final_status(http, request_id)

    assert status["status"] == "success", status
    versions = journal(service, request_id)
    assert len({row.nonce for row in versions}) == 1  # every version is the same fill
    mined = [row for row in versions if row.status == "mined"]
    assert len(mined) == 1
    assert {row.status for row in versions} - {"mined"} <= {"dropped", "replaced"}
    assert status["txHashes"] == [mined[0].tx_hash]
    original, replacement = versions[0], mined[0]
    assert int(replacement.max_priority_fee_per_gas) > int(original.max_priority_fee_per_gas)
    destination = Web3(Web3.HTTPProvider(destination_rpc))
    filled = destination.eth.get_transaction(HexStr(mined[0].tx_hash))
    assert filled["input"][-32:].hex() == quote["protocol"]["v2"]["orderId"][2:]
    received = balance(devnet, DESTINATION, NATIVE, recipient) - before
    assert received == int(quote["details"]["currencyOut"]["amount"])
