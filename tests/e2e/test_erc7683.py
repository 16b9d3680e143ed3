"""ERC-7683 orders on the devnet, through the real service: opened with `openFor` under a user's
EIP-712 signature (made by eth-account), taken by the indexer from the settler's `Open` event,
filled through the destination settler (`success`), or refused and refunded (`refund`); the
worker process killed with SIGKILL while both are in flight loses nothing and pays nothing twice.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3
from web3.logs import DISCARD

from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.domain.erc7683 import ORDER_DATA_TYPE, CrossfillOrderData
from crossfill.kinds.evm.config import evm_chains
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, ORIGIN, balance, funded_user, rpc_urls, usdc
from tests.support.erc7683 import erc7683_request_id, gasless_order_tuple, sign_gasless_order
from tests.support.service import ServiceProcess, service_settings
from tests.support.waiting import wait_for

USDC = 10**6
INPUT = 50 * USDC


@pytest.fixture
def service_process(devnet: RunningDevnet, tmp_path: Path):
    service = ServiceProcess(service_settings(tmp_path, devnet.deployment_path))
    service.start()
    yield service
    service.stop()


def _settlers(devnet: RunningDevnet) -> tuple[str, str]:
    origin, destination = evm_chains(devnet.deployment)[:2]
    origin_settler = origin.contracts.erc7683_origin_settler
    destination_settler = destination.contracts.erc7683_destination_settler
    assert origin_settler is not None and destination_settler is not None
    return origin_settler, destination_settler


def _gasless_order(
    devnet: RunningDevnet, user: LocalAccount, recipient: str, output: int, nonce: int
) -> dict[str, Any]:
    origin_settler, destination_settler = _settlers(devnet)
    data = CrossfillOrderData(
        input_token=usdc(devnet, ORIGIN),
        input_amount=INPUT,
        destination_chain_id=DESTINATION,
        destination_settler=destination_settler,
        output_token=usdc(devnet, DESTINATION),
        output_amount=output,
        recipient=recipient,
    )
    now = int(time.time())
    return {
        "originSettler": origin_settler,
        "user": user.address,
        "nonce": nonce,
        "originChainId": ORIGIN,
        "openDeadline": now + 600,
        "fillDeadline": now + 1800,
        "orderDataType": ORDER_DATA_TYPE,
        "orderData": data.encode(),
    }


def _open_for(devnet: RunningDevnet, relayer: LocalAccount, order: dict[str, Any]) -> str:
    """`openFor` sent by someone else than the user; the order's id from its `Open` event."""
    origin = evm_chains(devnet.deployment)[0]
    web3 = signing_web3(origin.rpc_url, relayer)
    settler = contract_at(web3, "CrossfillOriginSettler", order["originSettler"])
    user = order.pop("signer")
    signature = sign_gasless_order(user, order)
    receipt = send(web3, settler.functions.openFor(gasless_order_tuple(order), signature, b""))
    (opened,) = settler.events.Open().process_receipt(receipt, errors=DISCARD)
    return "0x" + bytes(opened.args["orderId"]).hex()


def _approve_settler(devnet: RunningDevnet, user: LocalAccount) -> None:
    origin = evm_chains(devnet.deployment)[0]
    holder = signing_web3(origin.rpc_url, user)
    token = contract_at(holder, "TestUSDC", usdc(devnet, ORIGIN))
    send(holder, token.functions.approve(_settlers(devnet)[0], 10 * INPUT))


def _status(http: httpx.Client, request_id: str) -> dict[str, Any]:
    response = http.get("/intents/status/v3", params={"requestId": request_id})
    return response.json() if response.status_code == 200 else {"status": "unknown"}


def test_orders_opened_for_a_signature_are_filled_or_refunded_across_kills(
    service_process: ServiceProcess, devnet: RunningDevnet
) -> None:
    user = funded_user(devnet, usdc_amount=2 * INPUT)
    relayer = funded_user(devnet)
    _approve_settler(devnet, user)
    filled_to, refused_to = Account.create().address, Account.create().address
    # Half the input is covered whatever the fees; twice the input never is.
    fillable = {**_gasless_order(devnet, user, filled_to, INPUT // 2, nonce=1), "signer": user}
    too_much = {**_gasless_order(devnet, user, refused_to, 2 * INPUT, nonce=2), "signer": user}

    filled_id = _open_for(devnet, relayer, fillable)
    service_process.kill()
    service_process.start()
    refused_id = _open_for(devnet, relayer, too_much)
    time.sleep(0.5)
    service_process.kill()
    service_process.start()

    ids = {"success": erc7683_request_id(filled_id), "refund": erc7683_request_id(refused_id)}
    with httpx.Client(base_url=service_process.base_url, timeout=10) as http:
        done = wait_for(
            lambda: all(_status(http, rid)["status"] == want for want, rid in ids.items()),
            timeout=180,
            interval=1,
        )
        final = {want: _status(http, rid) for want, rid in ids.items()}
    assert done, final

    # Paid once, through the destination settler, to the recipient; nothing to the refused one.
    destination = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION]))
    settler = contract_at(destination, "CrossfillDestinationSettler", _settlers(devnet)[1])
    fills = settler.events.OrderFilled().get_logs(from_block=0)
    assert ["0x" + bytes(e.args["orderId"]).hex() for e in fills].count(filled_id) == 1
    assert all("0x" + bytes(e.args["orderId"]).hex() != refused_id for e in fills)
    assert balance(devnet, DESTINATION, usdc(devnet, DESTINATION), filled_to) >= INPUT // 2
    assert balance(devnet, DESTINATION, usdc(devnet, DESTINATION), refused_to) == 0
    # The refused order's input came back to the user, less its refund's gas.
    back = balance(devnet, ORIGIN, usdc(devnet, ORIGIN), user.address)
    assert INPUT * 9 // 10 < back < INPUT
