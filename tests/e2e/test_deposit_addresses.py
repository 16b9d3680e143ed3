"""Deposit addresses on the devnet: a plain transfer to the request's own address is swept into
the Depository and filled, or refunded; every balance is read on chain."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_typing import HexStr
from sqlalchemy import select
from web3 import Web3
from web3.exceptions import ContractLogicError
from web3.types import Wei

from crossfill.contracts import calldata
from crossfill.contracts.deposit_addresses import Recovery
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.kinds.evm.config import evm_chains
from crossfill.store.tables import AddressTransfer, OutboxEvent
from crossfill.types import TraceApi
from crossfill_client import QuoteRequest, RequestStatus
from crossfill_client.models import EvmTransactionData
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    OPERATOR_TOKEN,
    ORIGIN,
    REFUNDED,
    balance,
    bridge_request,
    final_status,
    funded_user,
    listed_v3,
    new_api_key,
    request_quote,
    rpc_urls,
    stored_rows,
    usdc,
)
from tests.e2e.user_client import UserClients, evm_wallet, succeeded
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for
from tests.support.wallets.evm import pay_by_self_destruct, send_item

ETH = 10**18
USDC = 10**6


@pytest.fixture
def service(
    request: pytest.FixtureRequest, start_service: StartService, devnet: RunningDevnet
) -> ServiceThread:
    """The service on the devnet; a test parametrized with a kind of traces (`EITHER_TRACES`)
    has it read contracts' payments from the origin's traces of that kind (anvil serves
    both)."""
    origin, *others = evm_chains(devnet.deployment)
    traces = getattr(request, "param", origin.trace_internal_transfers)
    traced = origin.model_copy(update={"trace_internal_transfers": traces})
    deployment = devnet.deployment.model_copy(update={"chains": (traced, *others)})
    return start_service(deployment, run_workers=True, settings={"admin_token": OPERATOR_TOKEN})


EITHER_TRACES = pytest.mark.parametrize("service", list(TraceApi), indirect=True)


def _request(
    user: LocalAccount,
    recipient: str,
    currencies: tuple[str, str] = (NATIVE, NATIVE),
    amount: int = ETH // 10,
    **fields: Any,
) -> QuoteRequest:
    """`amount` (0.1 ETH unless told) from ORIGIN to DESTINATION through a deposit address."""
    return bridge_request(
        user.address, currencies, amount, recipient=recipient, use_deposit_address=True, **fields
    )


def _pay(devnet: RunningDevnet, payer: LocalAccount, item: dict[str, Any]) -> str:
    """Send a step's item as a wallet would (a plain transfer)."""
    return send_item(Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN])), payer, item)


def _record(client: httpx.Client, key: str, request_id: str) -> dict[str, Any]:
    (record,) = listed_v3(client, key, id=request_id)["requests"]
    return dict(record)


def _last_event(service: ServiceThread, request_id: str) -> dict[str, Any]:
    """The payload of the request's last status event (its webhooks' `data`)."""
    events = stored_rows(
        service,
        select(OutboxEvent).where(OutboxEvent.request_id == request_id).order_by(OutboxEvent.id),
    )
    return dict(events[-1].payload)


def test_strict_native_deposit_address_is_swept_and_filled(
    devnet: RunningDevnet, service: ServiceThread, client: httpx.Client, user_clients: UserClients
) -> None:
    key = new_api_key(client, "deposit-addresses")
    client.headers["x-api-key"] = key
    user = funded_user(devnet)
    recipient = Account.create().address
    user_client = user_clients(key)
    quote = user_client.quote(_request(user, recipient))
    (step,) = quote.steps
    address = step.deposit_address
    item = step.items[0].data
    assert isinstance(item, EvmTransactionData)
    assert Web3.is_address(address) and item.to == address.lower()
    assert item.data == "0x" and item.value == ETH // 10
    request_id = step.request_id
    assert balance(devnet, ORIGIN, NATIVE, address) == 0

    result = user_client.execute(quote, evm_wallet(user))
    succeeded(result)
    (transfer,) = [sent.tx_id for sent in result.transactions]

    # The address was deployed and emptied into the Depository; the recipient was paid.
    assert balance(devnet, ORIGIN, NATIVE, address) == 0
    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    assert web3.eth.get_code(Web3.to_checksum_address(address)) != b""
    depository = evm_chains(devnet.deployment)[0].contracts.depository
    assert balance(devnet, ORIGIN, NATIVE, depository) >= ETH // 10
    paid = balance(devnet, DESTINATION, NATIVE, recipient)
    assert paid == quote.details.currency_out.amount

    record = _record(client, key, request_id)
    assert record["depositAddress"] == {
        "address": address.lower(),
        "type": "strict",
        "depositor": user.address.lower(),
        "depositTxHash": transfer,
        "recoveryAddress": None,
    }
    assert "deposit_address" in record["features"]
    by_address = listed_v3(client, key, depositAddress=address)
    assert [r["id"] for r in by_address["requests"]] == [request_id]
    by_term = listed_v3(client, key, term=address)
    assert [r["id"] for r in by_term["requests"]] == [request_id]
    by_feature = listed_v3(client, key, features="deposit_address")
    assert [r["id"] for r in by_feature["requests"]] == [request_id]
    event = _last_event(service, request_id)
    assert event["status"] == "success"
    assert event["depositAddress"] == {
        "address": address.lower(),
        "depositAddressType": "strict",
        "depositor": user.address.lower(),
        "depositTxHash": transfer,
    }


def _usdc_request(
    devnet: RunningDevnet, user: LocalAccount, recipient: str, **fields: Any
) -> QuoteRequest:
    currencies = (usdc(devnet, ORIGIN), usdc(devnet, DESTINATION))
    return _request(user, recipient, currencies, 100 * USDC, **fields)


def _transfer_usdc(devnet: RunningDevnet, payer: LocalAccount, to: str, amount: int) -> str:
    data = calldata.erc20_transfer(Web3.to_checksum_address(to), amount)
    item = {
        "to": usdc(devnet, ORIGIN),
        "data": calldata.hex_data(data),
        "value": "0",
        "chainId": ORIGIN,
    }
    return _pay(devnet, payer, item)


def test_strict_usdc_deposit_address_fills_and_a_second_transfer_is_a_child_request(
    devnet: RunningDevnet, client: httpx.Client, user_clients: UserClients
) -> None:
    key = new_api_key(client, "deposit-addresses-usdc")
    client.headers["x-api-key"] = key
    user = funded_user(devnet, usdc_amount=300 * USDC)
    recipient = Account.create().address
    user_client = user_clients(key)
    quote = user_client.quote(_usdc_request(devnet, user, recipient))
    (step,) = quote.steps  # no approval: a plain transfer
    address, item = step.deposit_address, step.items[0].data
    token = usdc(devnet, ORIGIN)
    assert isinstance(item, EvmTransactionData)
    assert item.to == token.lower() and item.value == 0
    assert item.data == calldata.hex_data(calldata.erc20_transfer(address, 100 * USDC))

    succeeded(user_client.execute(quote, evm_wallet(user)))
    out = usdc(devnet, DESTINATION)
    first_paid = balance(devnet, DESTINATION, out, recipient)
    assert first_paid == quote.details.currency_out.amount
    assert balance(devnet, ORIGIN, token, address) == 0

    # The same address paid again: a child request of its own, filled on the quote's terms.
    second = _transfer_usdc(devnet, user, address, 100 * USDC)
    listed: list[dict[str, Any]] = []

    def child_listed() -> bool:
        listed[:] = client.get(
            "/requests/v3",
            params={"depositAddress": address, "includeChildRequests": "true"},
            headers={"x-api-key": key},
        ).json()["requests"]
        return len(listed) == 2

    assert wait_for(child_listed, timeout=30)
    (child,) = [r for r in listed if r["id"] != step.request_id]
    assert child["depositAddress"]["depositTxHash"] == second
    assert user_client.wait(child["id"]).status is RequestStatus.SUCCESS
    assert balance(devnet, DESTINATION, out, recipient) == 2 * first_paid
    assert balance(devnet, ORIGIN, token, address) == 0
    assert balance(devnet, ORIGIN, token, user.address) == 100 * USDC
    # Without includeChildRequests the address lists its own request only.
    plain = client.get(
        "/requests/v3", params={"depositAddress": address}, headers={"x-api-key": key}
    ).json()["requests"]
    assert [r["id"] for r in plain] == [step.request_id]


def test_underpaid_strict_deposit_address_is_refunded_to_refund_to(
    devnet: RunningDevnet, service: ServiceThread, client: httpx.Client
) -> None:
    user = funded_user(devnet)
    refund_to = Account.create().address
    quote = request_quote(
        client, _request(user, Account.create().address, refund_to=refund_to).wire()
    )
    (step,) = quote["steps"]
    address = step["depositAddress"]
    sent = ETH // 20  # half the quoted amount
    _pay(devnet, user, {**step["items"][0]["data"], "value": str(sent)})

    status = final_status(client, step["requestId"], timeout=60, until=REFUNDED)
    assert status["failReason"] == "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL"
    refunded = balance(devnet, ORIGIN, NATIVE, refund_to)
    assert 0 < refunded < sent  # the deposit, net of the refund's gas
    assert balance(devnet, ORIGIN, NATIVE, address) == 0


def test_wrong_currency_at_a_deposit_address_is_refunded(
    devnet: RunningDevnet, service: ServiceThread, client: httpx.Client
) -> None:
    user = funded_user(devnet, usdc_amount=50 * USDC)
    refund_to = Account.create().address
    quote = request_quote(
        client, _request(user, Account.create().address, refund_to=refund_to).wire()
    )
    (step,) = quote["steps"]
    address = step["depositAddress"]
    _transfer_usdc(devnet, user, address, 50 * USDC)  # USDC to an address quoted for ether

    status = final_status(client, step["requestId"], timeout=60, until=REFUNDED)
    assert status["failReason"] == "DEPOSIT_ADDRESS_MISMATCH"
    token = usdc(devnet, ORIGIN)
    refunded = balance(devnet, ORIGIN, token, refund_to)
    assert 0 < refunded <= 50 * USDC
    assert balance(devnet, ORIGIN, token, address) == 0


def test_recovery_address_recovers_funds_held_by_a_deposit_address(
    devnet: RunningDevnet, start_service: StartService
) -> None:
    # No workers: the funds stay at the address (as when its recipient is blocked).
    service = start_service()
    recovery = Account.create()
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        quote = request_quote(
            http,
            _request(user, Account.create().address, recovery_address=recovery.address).wire(),
        )
    (step,) = quote["steps"]
    address = step["depositAddress"]
    origin = evm_chains(devnet.deployment)[0]
    factory = origin.contracts.deposit_address_factory
    assert factory is not None
    key = bytes.fromhex(quote["protocol"]["v2"]["orderId"][2:])
    web3 = Web3(Web3.HTTPProvider(origin.rpc_url))
    on_chain = contract_at(web3, "DepositAddressFactory", factory)
    assert on_chain.functions.addressOf(key, recovery.address).call().lower() == address.lower()
    _pay(devnet, user, step["items"][0]["data"])
    assert balance(devnet, ORIGIN, NATIVE, address) == ETH // 10
    # Only the factory's owner (the solver) sweeps.
    stolen = on_chain.functions.sweep(key, recovery.address, NATIVE, ETH // 10, user.address, key)
    with pytest.raises(ContractLogicError):
        stolen.call({"from": user.address})

    recover = Recovery(
        factory=factory,
        chain_id=ORIGIN,
        key=key,
        recovery_address=recovery.address,
        currency=NATIVE,
        amount=ETH // 10,
        nonce=1,
        deadline=int(time.time()) + 600,
    )
    signed = recover.calldata(recover.sign(recovery))
    item = {"to": factory, "data": calldata.hex_data(signed), "value": "0", "chainId": ORIGIN}
    _pay(devnet, user, item)  # anyone may submit the recovery address's signature
    assert balance(devnet, ORIGIN, NATIVE, recovery.address) == ETH // 10
    assert balance(devnet, ORIGIN, NATIVE, address) == 0

    # The signature pays once; another signer's does not pay at all.
    _pay(devnet, user, step["items"][0]["data"])
    forged = recover.calldata(recover.sign(Account.create()))
    for refused in (signed, forged):
        with pytest.raises(ContractLogicError):
            web3.eth.call({"to": Web3.to_checksum_address(factory), "data": refused})
    assert balance(devnet, ORIGIN, NATIVE, address) == ETH // 10


def test_open_usdc_deposit_address_prices_each_transfer_as_its_own_request(
    devnet: RunningDevnet, service: ServiceThread, client: httpx.Client
) -> None:
    key = new_api_key(client, "deposit-addresses-open")
    client.headers["x-api-key"] = key
    user = funded_user(devnet, usdc_amount=200 * USDC)
    recipient, refund_to = Account.create().address, Account.create().address
    open_body = _usdc_request(devnet, user, recipient, strict=False).wire()
    refused = client.post("/quote/v2", json=open_body)
    assert refused.status_code == 400 and "refundTo" in refused.json()["message"]
    quote = request_quote(client, {**open_body, "refundTo": refund_to})
    (step,) = quote["steps"]
    address, parent = step["depositAddress"], step["requestId"]

    # Any amount: 40 USDC, then 70 USDC, each priced when it arrives.
    sent = [_transfer_usdc(devnet, user, address, amount) for amount in (40 * USDC, 70 * USDC)]
    children: list[dict[str, Any]] = []

    def both_listed() -> bool:
        listed = client.get(
            "/requests/v3",
            params={"depositAddress": address, "includeChildRequests": "true"},
            headers={"x-api-key": key},
        ).json()["requests"]
        children[:] = [r for r in listed if r["id"] != parent]
        return len(children) == 2

    assert wait_for(both_listed, timeout=30)
    assert {c["depositAddress"]["depositTxHash"] for c in children} == set(sent)
    assert all(c["depositAddress"]["type"] == "open" for c in children)
    for child in children:
        assert final_status(client, child["id"], timeout=60)["status"] == "success"
    token, out = usdc(devnet, ORIGIN), usdc(devnet, DESTINATION)
    received = balance(devnet, DESTINATION, out, recipient)
    assert 100 * USDC < received < 110 * USDC  # both transfers, net of fees
    assert balance(devnet, ORIGIN, token, address) == 0
    assert balance(devnet, ORIGIN, token, user.address) == 90 * USDC
    assert balance(devnet, ORIGIN, token, refund_to) == 0


def test_an_overpaid_strict_deposit_fills_the_quote_and_refunds_the_excess(
    devnet: RunningDevnet, service: ServiceThread, client: httpx.Client
) -> None:
    key = new_api_key(client, "deposit-addresses-overpaid")
    client.headers["x-api-key"] = key
    user = funded_user(devnet)
    recipient, refund_to = Account.create().address, Account.create().address
    quote = request_quote(client, _request(user, recipient, refund_to=refund_to).wire())
    (step,) = quote["steps"]
    address, request_id = step["depositAddress"], step["requestId"]
    _pay(devnet, user, {**step["items"][0]["data"], "value": str(ETH // 10 + ETH // 20)})

    assert final_status(client, request_id, timeout=60)["status"] == "success"
    assert balance(devnet, DESTINATION, NATIVE, recipient) == int(
        quote["details"]["currencyOut"]["amount"]
    )
    listed = listed_v3(client, key, id=request_id, includeChildRequests="true")["requests"]
    (excess,) = [r for r in listed if r["id"] != request_id]
    status = final_status(client, excess["id"], timeout=60, until=REFUNDED)
    assert status["failReason"] == "INCORRECT_PAYMENT"
    refunded = balance(devnet, ORIGIN, NATIVE, refund_to)
    assert 0 < refunded < ETH // 20  # the excess, net of the refund's gas
    assert balance(devnet, ORIGIN, NATIVE, address) == 0


def _pay_through_multicaller(
    devnet: RunningDevnet, payer: LocalAccount, calls: list[tuple[str, bool, int, bytes]]
) -> str:
    """`payer` pays through the devnet's Multicaller (`aggregate3Value`), as a smart wallet
    or an exchange's batch contract does: the addresses are paid by internal calls."""
    web3 = signing_web3(rpc_urls(devnet)[ORIGIN], payer)
    multicaller = contract_at(
        web3, "Multicaller", evm_chains(devnet.deployment)[0].contracts.multicaller
    )
    value = sum(call[2] for call in calls)
    receipt = send(web3, multicaller.functions.aggregate3Value(calls), value=value)
    return str(receipt["transactionHash"].to_0x_hex())


@EITHER_TRACES
def test_ether_a_contract_pays_to_a_deposit_address_is_swept_and_filled(
    devnet: RunningDevnet, service: ServiceThread, client: httpx.Client
) -> None:
    """No transaction is `to` the address: the node's call traces show the payment. One
    made inside a call that reverted (its own call succeeded) is not a payment."""
    user, recipient = funded_user(devnet), Account.create().address
    quote = request_quote(client, _request(user, recipient).wire())
    (step,) = quote["steps"]
    address, request_id = Web3.to_checksum_address(step["depositAddress"]), step["requestId"]
    amount = ETH // 10
    multicaller = Web3.to_checksum_address(evm_chains(devnet.deployment)[0].contracts.multicaller)
    depository = Web3.to_checksum_address(evm_chains(devnet.deployment)[0].contracts.depository)
    undone = contract_at(Web3(), "Multicaller", multicaller).encode_abi(
        "aggregate3Value",
        [[(address, False, amount, b""), (depository, False, 0, bytes.fromhex("deadbeef"))]],
    )
    _pay_through_multicaller(devnet, user, [(multicaller, True, amount, bytes.fromhex(undone[2:]))])
    assert balance(devnet, ORIGIN, NATIVE, address) == 0  # the payment was undone

    paid = _pay_through_multicaller(devnet, user, [(address, False, amount, b"")])
    status = final_status(client, request_id, timeout=60)
    assert status["status"] == "success", status
    assert balance(devnet, DESTINATION, NATIVE, recipient) == int(
        quote["details"]["currencyOut"]["amount"]
    )
    assert balance(devnet, ORIGIN, NATIVE, address) == 0
    seen = stored_rows(
        service, select(AddressTransfer).where(AddressTransfer.address == address.lower())
    )
    assert [(row.tx_hash, int(row.amount)) for row in seen] == [(paid, amount)]
    assert seen[0].depositor == multicaller.lower()


@EITHER_TRACES
def test_ether_a_self_destructing_contract_hands_over_is_swept_and_filled(
    devnet: RunningDevnet, service: ServiceThread, client: httpx.Client
) -> None:
    """A self-destructing contract hands its balance to the address."""
    user, recipient = funded_user(devnet), Account.create().address
    quote = request_quote(client, _request(user, recipient).wire())
    (step,) = quote["steps"]
    address, request_id = step["depositAddress"].lower(), step["requestId"]
    amount = Wei(ETH // 10)
    web3 = signing_web3(rpc_urls(devnet)[ORIGIN], user)
    receipt = pay_by_self_destruct(web3, user, address, amount)
    sent = receipt["transactionHash"]
    assert receipt["status"] == 1 and receipt["to"] is None
    assert balance(devnet, ORIGIN, NATIVE, address) == amount

    status = final_status(client, request_id, timeout=60)
    assert status["status"] == "success", status
    assert balance(devnet, DESTINATION, NATIVE, recipient) == int(
        quote["details"]["currencyOut"]["amount"]
    )
    assert balance(devnet, ORIGIN, NATIVE, address) == 0
    seen = stored_rows(service, select(AddressTransfer).where(AddressTransfer.address == address))
    assert [(row.tx_hash, row.log_index, int(row.amount)) for row in seen] == [
        (sent.to_0x_hex(), -2, amount)
    ]
    assert seen[0].depositor == str(receipt["contractAddress"]).lower()


# A contract that calls itself with all its gas until the gas runs out: one transaction's
# call frames nest hundreds deep (the 63/64 rule stops it near 530 with 29M gas). Runtime
# `CALL(gas, address, 0, 0, 0, 0, 0) STOP`, returned by its creation code.
_RECURSOR = "0x6d60006000600060006000305af100600052600e6012f3"


@pytest.mark.parametrize("service", [TraceApi.GETH], indirect=True)
def test_a_transaction_of_the_deepest_calls_does_not_stop_the_watch(
    devnet: RunningDevnet, service: ServiceThread, client: httpx.Client
) -> None:
    """geth's frames of such a transaction nest deeper than Python's decoder goes by default;
    the watch reads that block and finds the payment made after it."""
    user, recipient = funded_user(devnet), Account.create().address
    quote = request_quote(client, _request(user, recipient).wire())
    (step,) = quote["steps"]
    address = step["depositAddress"].lower()
    origin_rpc = rpc_urls(devnet)[ORIGIN]
    web3 = signing_web3(origin_rpc, user)
    created = web3.eth.wait_for_transaction_receipt(
        web3.eth.send_transaction({"from": user.address, "data": HexStr(_RECURSOR)}), timeout=30
    )
    recursor = created["contractAddress"]
    assert recursor is not None
    deep = web3.eth.send_transaction({"from": user.address, "to": recursor, "gas": 29_000_000})
    assert web3.eth.wait_for_transaction_receipt(deep, timeout=30)["status"] == 1
    frames = httpx.post(
        origin_rpc,
        json={"jsonrpc": "2.0", "id": 1, "method": "debug_traceTransaction",
              "params": [deep.to_0x_hex(), {"tracer": "callTracer"}]},
    ).text  # fmt: skip
    assert frames.count('"calls"') > 500

    assert pay_by_self_destruct(web3, user, address, Wei(ETH // 10))["status"] == 1
    status = final_status(client, step["requestId"], timeout=60)
    assert status["status"] == "success", status
    assert balance(devnet, ORIGIN, NATIVE, address) == 0
