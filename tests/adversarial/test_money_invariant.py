"""The money invariant's checker itself: it finds a deposit with no outcome, a fill that no
deposit paid for and a payout that pays back nothing, read from the chains' own events."""

from __future__ import annotations

import time

import httpx
from eth_account import Account

from crossfill.contracts import calldata
from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.domain.call_request import CallRequest, DepositoryCall, sign_call_request
from crossfill.kinds.evm.config import evm_chain
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    funded_user,
    native_bridge,
    request_quote,
)
from tests.money_invariant import account_for_money, heads
from tests.support.service import ServiceThread, StartService
from tests.support.wallets.evm import send_item


def _bare_service(start_service: StartService) -> ServiceThread:
    """A service whose database nothing records into: no workers."""
    return start_service(run_workers=False)


def test_a_deposit_nobody_recorded_is_not_accounted_for(start_service, devnet) -> None:
    service = _bare_service(start_service)
    since = heads(devnet.deployment)
    user = funded_user(devnet)
    origin = evm_chain(devnet.deployment, ORIGIN)
    assert origin is not None
    item = {
        "to": origin.contracts.depository,
        "data": calldata.hex_data(calldata.deposit_native(user.address, b"\x17" * 32)),
        "value": str(10**15),
        "chainId": ORIGIN,
    }
    tx_hash = send_item(signing_web3(origin.rpc_url, user), user, item)
    report = account_for_money(devnet.deployment, service.settings.database, since=since)
    assert report.deposits == 1
    assert [entry.split(" ")[0] for entry in report.unsettled] == [f"{ORIGIN}:{tx_hash}:0"]


def test_a_fill_no_deposit_paid_for_is_found(start_service, devnet) -> None:
    service = _bare_service(start_service)
    since = heads(devnet.deployment)
    destination = evm_chain(devnet.deployment, DESTINATION)
    assert destination is not None
    solver = signing_web3(destination.rpc_url, accounts.solver())
    filler = contract_at(solver, "Filler", destination.contracts.filler)
    order_id = b"\x29" * 32
    send(solver, filler.functions.fill(order_id, [], []))
    report = account_for_money(devnet.deployment, service.settings.database, since=since)
    assert report.unaccounted == [f"order 0x{order_id.hex()}: filled 1x, paid by 0 deposits"]


def test_a_payout_that_pays_back_no_deposit_is_found(start_service, devnet) -> None:
    service = _bare_service(start_service)
    origin = evm_chain(devnet.deployment, ORIGIN)
    assert origin is not None
    since = heads(devnet.deployment)
    payer = signing_web3(origin.rpc_url, accounts.solver())
    depository = contract_at(payer, "Depository", origin.contracts.depository)
    payout = CallRequest(
        calls=(DepositoryCall(to=Account.create().address, data=b"", value=1),),
        nonce=int(time.time_ns()),
        expiration=int(time.time()) + 600,
    )
    signature = sign_call_request(
        accounts.allocator(), payout, chain_id=ORIGIN, depository=origin.contracts.depository
    )
    # The Depository holds what earlier tests deposited; one wei of it goes to a stranger.
    receipt = send(payer, depository.functions.execute(payout.as_tuple(), signature))
    report = account_for_money(devnet.deployment, service.settings.database, since=since)
    tx_hash = receipt["transactionHash"].to_0x_hex()
    assert report.unaccounted == [f"payout {ORIGIN}:{tx_hash} pays no deposit or claim"]


def test_a_deposit_address_holding_what_no_record_leaves_there_is_found(
    start_service, devnet
) -> None:
    service = _bare_service(start_service)
    since = heads(devnet.deployment)
    user = funded_user(devnet)
    body = native_bridge(user.address, recipient=Account.create().address, useDepositAddress=True)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        (step,) = request_quote(http, body)["steps"]
    origin = evm_chain(devnet.deployment, ORIGIN)
    assert origin is not None
    item = {**step["items"][0]["data"], "value": str(10**15)}
    send_item(signing_web3(origin.rpc_url, user), user, item)
    report = account_for_money(devnet.deployment, service.settings.database, since=since)
    address = step["depositAddress"].lower()
    assert report.unaccounted == [
        f"deposit address {ORIGIN}:{address} holds {10**15} of {NATIVE}; its records leave 0 there"
    ]
