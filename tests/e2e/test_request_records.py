"""Request records tell what happened on chain: the amount really deposited, what the recipient
really got, the refund with its own fee and time; read back over HTTP and checked against the
chains themselves."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_typing import HexStr
from web3 import Web3

from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    OPERATOR_TOKEN,
    ORIGIN,
    REFUNDED,
    V2_STILL_SERVED,
    balance,
    bridge_request,
    deposit_native,
    final_status,
    funded_user,
    listed_v3,
    native_bridge,
    new_api_key,
    pool_price_moved,
    request_quote,
    rpc_urls,
    usdc,
)
from tests.e2e.user_client import UserClient, evm_wallet, succeeded
from tests.support.service import ServiceThread, StartService

ETHER = 10**18


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def service(request: pytest.FixtureRequest, start_service: StartService) -> ServiceThread:
    """The service with its workers, on each database it supports."""
    settings: dict[str, Any] = {"admin_token": OPERATOR_TOKEN}
    if request.param == "postgresql":
        settings["database_url"] = request.getfixturevalue("postgres_url")
    return start_service(run_workers=True, settings=settings, wall_clock=lambda: V2_STILL_SERVED)


def _chain(devnet: RunningDevnet, chain_id: int) -> Web3:
    return Web3(Web3.HTTPProvider(rpc_urls(devnet)[chain_id]))


def _as_mined(devnet: RunningDevnet, chain_id: int, tx_hash: str) -> dict[str, Any]:
    """A transaction's fee (gas used times effective gas price), block and block time, read
    from the chain on our own."""
    web3 = _chain(devnet, chain_id)
    receipt = web3.eth.get_transaction_receipt(HexStr(tx_hash))
    block = web3.eth.get_block(receipt["blockNumber"])
    return {
        "fee": str(receipt["gasUsed"] * receipt["effectiveGasPrice"]),
        "block": receipt["blockNumber"],
        "timestamp": block["timestamp"],
        "chainId": chain_id,
        "status": "success",
    }


def _recorded(tx: dict[str, Any]) -> dict[str, Any]:
    return {name: tx[name] for name in ("fee", "block", "timestamp", "chainId", "status")}


def _received_in_block(devnet: RunningDevnet, chain_id: int, holder: str, tx_hash: str) -> int:
    """What `holder`'s ether balance gained in the block that mined `tx_hash`."""
    web3 = _chain(devnet, chain_id)
    mined_in = web3.eth.get_transaction_receipt(HexStr(tx_hash))["blockNumber"]
    address = Web3.to_checksum_address(holder)
    return web3.eth.get_balance(address, mined_in) - web3.eth.get_balance(address, mined_in - 1)


def test_underpaid_deposit_record_shows_the_real_deposit_and_refund(service, devnet) -> None:
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        key = new_api_key(http, "records")
        quote = request_quote(http, native_bridge(user.address))
        request_id = quote["steps"][0]["requestId"]
        quoted_in = int(quote["details"]["currencyIn"]["amount"])
        paid = quoted_in // 2
        deposit_hash = deposit_native(devnet, user, quote, paid)
        status = final_status(http, request_id, until=REFUNDED)
        (record,) = listed_v3(http, key, id=request_id)["requests"]
        v2 = http.get("/requests/v2", params={"id": request_id})
    assert v2.status_code == 200, v2.text
    (v2_record,) = v2.json()["requests"]
    (refund_hash,) = status["txHashes"]
    refunded = _received_in_block(devnet, ORIGIN, user.address, refund_hash)
    assert 0 < refunded < paid

    data = record["data"]
    currency_in = quote["details"]["currencyIn"]
    actual, quoted = data["route"]["actual"], data["route"]["quoted"]
    assert actual["origin"]["inputCurrency"]["amount"] == str(paid)
    assert actual["origin"]["inputCurrency"]["currency"] == currency_in["currency"]
    assert actual["origin"]["inputCurrency"]["amountFormatted"] == "0.05"
    assert actual["destination"]["outputCurrency"]["amount"] == "0"  # nothing was filled
    assert quoted["origin"]["inputCurrency"]["amount"] == str(quoted_in)  # the quote stays
    assert record["protocol"]["deposit"]["origin"]["amount"] == str(paid)
    assert record["protocol"]["deposit"]["origin"]["transactionId"] == deposit_hash

    (deposit_tx,) = data["inTxs"]
    assert deposit_tx["txHash"] == deposit_hash
    assert _recorded(deposit_tx) == _as_mined(devnet, ORIGIN, deposit_hash)
    (refund_tx,) = data["outTxs"]
    assert refund_tx["txHash"] == refund_hash
    assert _recorded(refund_tx) == _as_mined(devnet, ORIGIN, refund_hash)
    assert int(refund_tx["fee"]) > 0 and refund_tx["timestamp"] > 0
    refunds = record["protocol"]["settlement"]["destination"]["refunds"]
    assert refunds == [{"chainId": ORIGIN, "transactionId": refund_hash}]

    refund_data = data["refundCurrencyData"]
    assert refund_data["currency"] == currency_in["currency"]
    assert refund_data["amount"] == refund_data["minimumAmount"] == str(refunded)
    assert float(refund_data["amountUsd"]) > 0

    # What the deposit lost is what the refund kept back for its gas: execution, no fee.
    deposited_usd = Decimal(actual["origin"]["inputCurrency"]["amountUsd"])
    kept_usd = deposited_usd - Decimal(refund_data["amountUsd"])
    fees = data["fees"]["actual"]
    assert Decimal(fees["execution"]["usd"]) == kept_usd > 0
    assert fees["platform"] == fees["app"] == fees["sponsored"] == {"usd": "0"}

    # v2 shows the same facts under its own names.
    v2_data = v2_record["data"]
    assert v2_data["refundCurrencyData"] == refund_data
    assert [(tx["hash"], _recorded(tx)) for tx in v2_data["outTxs"]] == [
        (refund_hash, _recorded(refund_tx))
    ]
    assert [tx["hash"] for tx in v2_data["inTxs"]] == [deposit_hash]
    assert v2_record["protocol"]["deposit"]["origin"]["amount"] == str(paid)


def test_swap_record_shows_the_real_output(
    service: ServiceThread, devnet: RunningDevnet, client: httpx.Client, user_client: UserClient
) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    usdc_out = usdc(devnet, DESTINATION)
    key = new_api_key(client, "records")
    quote = user_client.quote(
        bridge_request(
            user.address,
            (NATIVE, usdc_out),
            ETHER // 4,
            recipient=recipient,
            slippage_tolerance=200,
        )
    )
    # After the quote: the pool moves a little against the user, within the tolerance.
    with pool_price_moved(devnet, DESTINATION, 2 * ETHER):
        result = user_client.execute(quote, evm_wallet(user))
        (record,) = listed_v3(client, key, id=quote.request_id)["requests"]
    succeeded(result)
    sent = {transaction.step_id: transaction.tx_id for transaction in result.transactions}
    received = balance(devnet, DESTINATION, usdc_out, recipient)
    expected = quote.details.currency_out.amount
    minimum = quote.details.currency_out.minimum_amount
    assert minimum is not None and minimum < received < expected

    data = record["data"]
    actual = data["route"]["actual"]
    assert actual["destination"]["outputCurrency"]["amount"] == str(received)
    assert actual["destination"]["outputCurrency"]["currency"]["address"] == usdc_out.lower()
    assert actual["origin"]["inputCurrency"]["amount"] == str(ETHER // 4)
    assert data["route"]["quoted"]["destination"]["outputCurrency"]["amount"] == str(expected)
    # USDC per whole ETH actually paid, to 18 decimals.
    deposited = ETHER // 4
    real_rate = Decimal(received * 10**18 * 10**18 // (deposited * 10**6)) / 10**18
    assert Decimal(actual["rate"]) == real_rate
    assert actual["rate"] != quote.details.rate
    assert data["route"]["includedSwapSources"] == ["uniswap-v2"]
    assert data["route"]["includedDestinationSwapSources"] == ["uniswap-v2"]
    assert data["route"]["includedOriginSwapSources"] == []
    (deposit_tx,) = data["inTxs"]
    assert _recorded(deposit_tx) == _as_mined(devnet, ORIGIN, sent["deposit"])
    (fill_tx,) = data["outTxs"]
    assert _recorded(fill_tx) == _as_mined(devnet, DESTINATION, fill_tx["txHash"])
    assert data["refundCurrencyData"] is None


def test_record_shows_who_really_deposited_and_the_fees_really_paid(
    service: ServiceThread, devnet: RunningDevnet, client: httpx.Client, user_client: UserClient
) -> None:
    """Another wallet runs the quote's deposit step: the record names that wallet as the
    depositor; its actual fees are the fill receipt's gas and what the deposit lost."""
    user, payer = Account.create(), funded_user(devnet)
    recipient = Account.create().address
    key = new_api_key(client, "depositors")
    quote = user_client.quote(bridge_request(user.address, recipient=recipient))
    result = user_client.execute(quote, evm_wallet(payer))
    succeeded(result)
    (record,) = listed_v3(client, key, id=quote.request_id)["requests"]
    origin = record["protocol"]["deposit"]["origin"]
    assert origin["depositor"] == payer.address.lower() != user.address.lower()
    assert record["user"] == user.address.lower()
    (deposit,) = result.transactions
    assert origin["transactionId"] == deposit.tx_id

    data = record["data"]
    (fill_tx,) = data["outTxs"]
    fill_gas_wei = int(_as_mined(devnet, DESTINATION, fill_tx["txHash"])["fee"])
    deposited = data["route"]["actual"]["origin"]["inputCurrency"]
    received = data["route"]["actual"]["destination"]["outputCurrency"]
    eth_usd = Decimal(deposited["amountUsd"]) / Decimal(deposited["amountFormatted"])
    actual = data["fees"]["actual"]
    execution = Decimal(actual["execution"]["usd"])
    assert execution == pytest.approx(fill_gas_wei * eth_usd / ETHER, rel=Decimal("0.01"))
    assert execution != Decimal(data["fees"]["quoted"]["execution"]["usd"])
    lost = Decimal(deposited["amountUsd"]) - Decimal(received["amountUsd"]) - execution
    assert Decimal(actual["platform"]["usd"]) == lost
    assert actual["app"] == actual["sponsored"] == actual["swap"] == {"usd": "0"}
