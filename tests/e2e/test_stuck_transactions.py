"""A fill that sits unmined is replaced with higher fees; exactly one version lands."""

from __future__ import annotations

from eth_typing import HexStr
from web3 import Web3

from crossfill.devnet.anvil import anvil_rpc
from crossfill.kinds.evm.config import evm_chains
from crossfill_client import RequestStatus
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    balance,
    bridge_request,
    funded_user,
    journal,
    rpc_urls,
)
from tests.e2e.user_client import UserClient, evm_wallet, following_until
from tests.support.service import StartService
from tests.support.waiting import wait_for


def test_stuck_fill_is_replaced_and_only_one_version_lands(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    chains = [
        chain.model_copy(update={"replace_stuck_after_seconds": 1})
        for chain in evm_chains(devnet.deployment)
    ]
    service = start_service(
        devnet.deployment.model_copy(update={"chains": chains}), run_workers=True
    )
    destination_rpc = rpc_urls(devnet)[DESTINATION]
    user = funded_user(devnet)
    recipient = user.address
    with UserClient(service.base_url, rpc_urls(devnet)) as user_client:
        quote = user_client.quote(bridge_request(user.address))
        request_id = quote.request_id
        before = balance(devnet, DESTINATION, NATIVE, recipient)
        anvil_rpc(destination_rpc, "evm_setAutomine", [False])  # nothing mines: the fill waits
        try:
            # The deposit's check followed only as far as the fill's submission.
            submitted = user_client.execute(
                quote, evm_wallet(user), options=following_until(RequestStatus.SUBMITTED)
            )
            assert submitted.status is not None
            assert submitted.status.status is RequestStatus.SUBMITTED
            assert wait_for(
                lambda: any(row.status == "replaced" for row in journal(service, request_id)),
                timeout=20,
            )
            anvil_rpc(destination_rpc, "evm_mine", [])
        finally:
            anvil_rpc(destination_rpc, "evm_setAutomine", [True])
        status = user_client.wait(request_id)

    assert status.status is RequestStatus.SUCCESS, status
    versions = journal(service, request_id)
    assert len({row.nonce for row in versions}) == 1  # every version is the same fill
    mined = [row for row in versions if row.status == "mined"]
    assert len(mined) == 1
    assert {row.status for row in versions} - {"mined"} <= {"dropped", "replaced"}
    assert status.tx_hashes == (mined[0].tx_hash,)
    original, replacement = versions[0], mined[0]
    assert int(replacement.max_priority_fee_per_gas) > int(original.max_priority_fee_per_gas)
    destination = Web3(Web3.HTTPProvider(destination_rpc))
    filled = destination.eth.get_transaction(HexStr(mined[0].tx_hash))
    assert quote.protocol is not None
    assert filled["input"][-32:].hex() == quote.protocol.v2.order_id[2:]
    received = balance(devnet, DESTINATION, NATIVE, recipient) - before
    assert received == quote.details.currency_out.amount
