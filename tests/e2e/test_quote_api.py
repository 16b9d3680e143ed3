"""POST /quote/v2 and GET /intents/status/v3 over HTTP, priced from live devnet state."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import httpx
import pytest
from eth_account import Account

from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.domain.order import order_signer
from crossfill.kinds.evm.config import evm_chains
from tests.e2e.bridging import native_bridge, usdc
from tests.e2e.conftest import validate_against
from tests.support.waiting import wait_for

NATIVE = "0x0000000000000000000000000000000000000000"
ORIGIN, DESTINATION = 900001, 900002


def _body(**overrides: Any) -> dict[str, Any]:
    return {**native_bridge(accounts.users()[0].address), **overrides}


@pytest.fixture
def quoting(client: httpx.Client) -> httpx.Client:
    """The client, once the followers have read fees and inventory."""
    responses: list[httpx.Response] = []

    def quotes() -> bool:
        responses.append(client.post("/quote/v2", json=_body()))
        return responses[-1].status_code == 200

    assert wait_for(quotes, timeout=10), responses[-1].text
    return client


def _quote(client: httpx.Client, **overrides: Any) -> dict[str, Any]:
    response = client.post("/quote/v2", json=_body(**overrides))
    assert response.status_code == 200, response.text
    quote: dict[str, Any] = response.json()
    validate_against("quote", quote)
    return quote


def test_native_bridge_quote_reconciles_and_deposits_with_the_order_id(quoting, devnet) -> None:
    quote = _quote(quoting)
    assert int(quote["details"]["userBalance"]) > 10**18
    details, fees = quote["details"], quote["fees"]
    amount_in = int(details["currencyIn"]["amount"])
    amount_out = int(details["currencyOut"]["amount"])
    assert amount_in == 10**17
    assert amount_out + int(fees["relayer"]["amount"]) == amount_in
    assert int(fees["relayer"]["amount"]) == int(fees["relayerGas"]["amount"]) + int(
        fees["relayerService"]["amount"]
    )
    assert int(fees["relayerGas"]["amount"]) > 0
    assert details["operation"] == "bridge"
    assert details["currencyIn"]["currency"]["chainId"] == ORIGIN
    (step,) = quote["steps"]
    assert step["id"] == "deposit" and step["kind"] == "transaction"
    (item,) = step["items"]
    order_id = quote["protocol"]["v2"]["orderId"]
    assert item["status"] == "incomplete"
    assert item["data"]["to"] == evm_chains(devnet.deployment)[0].contracts.depository.lower()
    assert item["data"]["value"] == str(amount_in)
    assert item["data"]["data"].endswith(order_id[2:])
    assert item["check"] == {
        "endpoint": f"/intents/status/v3?requestId={step['requestId']}",
        "method": "GET",
    }
    assert quote["protocol"]["v2"]["paymentDetails"]["amount"] == str(amount_in)


def test_usdc_bridge_asks_for_approval_only_when_allowance_is_short(quoting, devnet) -> None:
    user = Account.create()
    token = usdc(devnet, ORIGIN).lower()
    quote = _quote(
        quoting,
        user=user.address,
        originCurrency=token,
        destinationCurrency=usdc(devnet, DESTINATION).lower(),
        amount="25000000",
    )
    assert [step["id"] for step in quote["steps"]] == ["approve", "deposit"]
    assert quote["steps"][0]["items"][0]["data"]["to"] == token

    funded = accounts.users()[1]
    chain = evm_chains(devnet.deployment)[0]
    holder = signing_web3(chain.rpc_url, funded)
    send(
        holder,
        contract_at(holder, "TestUSDC", token).functions.approve(
            chain.contracts.depository, 10**12
        ),
    )
    approved = _quote(
        quoting,
        user=funded.address,
        originCurrency=token,
        destinationCurrency=usdc(devnet, DESTINATION).lower(),
        amount="25000000",
    )
    assert [step["id"] for step in approved["steps"]] == ["deposit"]
    assert approved["details"]["userBalance"] != "0"


def test_exact_output_delivers_the_requested_amount(quoting) -> None:
    quote = _quote(quoting, tradeType="EXACT_OUTPUT", amount=str(5 * 10**16))
    assert quote["details"]["currencyOut"]["amount"] == str(5 * 10**16)
    assert int(quote["details"]["currencyIn"]["amount"]) > 5 * 10**16


def test_implicit_usdc_deposit_is_a_transfer_tagged_with_the_order_id(quoting, devnet) -> None:
    token = usdc(devnet, ORIGIN).lower()
    quote = _quote(
        quoting,
        originCurrency=token,
        destinationCurrency=usdc(devnet, DESTINATION).lower(),
        amount="9000000",
        explicitDeposit=False,
    )
    (step,) = quote["steps"]
    data = step["items"][0]["data"]
    assert data["to"] == token
    assert data["data"].startswith("0xa9059cbb")
    assert data["data"].endswith(quote["protocol"]["v2"]["orderId"][2:])


def test_order_signature_only_with_protocol_data_and_signed_by_the_solver(quoting, devnet) -> None:
    assert "orderSignature" not in _quote(quoting)["protocol"]["v2"]
    protocol = _quote(quoting, includeProtocolData=True)["protocol"]["v2"]
    order_id = bytes.fromhex(protocol["orderId"][2:])
    assert protocol["orderData"]["solver"].lower() == devnet.deployment.solver.address.lower()
    signer = order_signer(order_id, protocol["orderSignature"])
    assert signer.lower() == devnet.deployment.solver.address.lower()


def test_quote_and_quote_v2_give_the_same_shape(quoting) -> None:
    unversioned = quoting.post("/quote", json=_body())
    assert unversioned.status_code == 200
    validate_against("quote", unversioned.json())


def test_quoted_request_is_waiting_and_unknown_request_is_404(quoting) -> None:
    request_id = _quote(quoting)["steps"][0]["requestId"]
    status = quoting.get("/intents/status/v3", params={"requestId": request_id, "referrer": "x"})
    assert status.status_code == 200
    validate_against("status", status.json())
    assert status.json()["status"] == "waiting"
    assert status.json()["failReason"] == "N/A"
    assert status.json()["inTxHashes"] == [] and status.json()["txHashes"] == []
    assert (
        quoting.get("/intents/status", params={"requestId": request_id}).json()["status"]
        == "waiting"
    )
    missing = quoting.get("/intents/status/v3", params={"requestId": "0x" + "ab" * 32})
    assert missing.status_code == 404
    assert missing.json()["statusCode"] == 404
    assert "not found" in missing.json()["message"]
    assert quoting.get("/intents/status/v3").status_code == 400


@pytest.mark.parametrize(
    ("overrides", "error_code"),
    [
        ({"originChainId": 1}, "UNSUPPORTED_CHAIN"),
        ({"destinationChainId": 31337}, "UNSUPPORTED_CHAIN"),
        ({"user": "0x1234"}, "INVALID_ADDRESS"),
        ({"recipient": "not-an-address"}, "INVALID_RECIPIENT"),
        ({"refundTo": "0xZZ"}, "INVALID_ADDRESS"),
        ({"originCurrency": "0x" + "12" * 20}, "UNSUPPORTED_CURRENCY"),
        ({"destinationCurrency": "usdc"}, "INVALID_OUTPUT_CURRENCY"),
        ({"amount": "0"}, "AMOUNT_TOO_LOW"),
        ({"amount": "-5"}, "AMOUNT_TOO_LOW"),
        ({"amount": "1.5"}, "AMOUNT_TOO_LOW"),
        ({"amount": "1000"}, "AMOUNT_TOO_LOW"),
        ({"amount": str(10**30)}, "INSUFFICIENT_LIQUIDITY"),
        ({"slippageTolerance": "10001"}, "INVALID_SLIPPAGE_TOLERANCE"),
        ({"slippageTolerance": "abc"}, "INVALID_SLIPPAGE_TOLERANCE"),
        ({"tradeType": "EXACT_SOMETHING"}, "UNSUPPORTED_EXECUTION_TYPE"),
        ({"txs": [{"to": "0x12", "value": "0", "data": "0x"}]}, "INVALID_EXTRA_TXS"),
        ({"txs": [{"to": NATIVE, "value": "1", "data": "0xzz"}]}, "INVALID_EXTRA_TXS"),
        ({"txsGasLimit": 100000}, "INVALID_EXTRA_TXS"),
        ({"appFees": [{"recipient": "0x12", "fee": "10"}]}, "INVALID_ADDRESS"),
        ({"usePermit": True}, "UNSUPPORTED_EXECUTION_TYPE"),
        ({"protocolVersion": "v3"}, "UNSUPPORTED_EXECUTION_TYPE"),
    ],
)
def test_bad_quote_requests_get_coded_400s(quoting, overrides, error_code) -> None:
    response = quoting.post("/quote/v2", json=_body(**overrides))
    assert response.status_code == 400, response.text
    body = response.json()
    validate_against("quote-error", body)
    assert body["errorCode"] == error_code
    assert body["statusCode"] == 400
    assert body["message"]


@pytest.mark.parametrize(
    "payload",
    [{}, {"user": "0x"}, [], "text", {**_body(), "originChainId": "900001"}, {**_body(), "ttl": 5}],
)
def test_malformed_bodies_are_json_400s(quoting, payload) -> None:
    response = quoting.post("/quote/v2", json=payload)
    assert response.status_code == 400
    assert response.json()["statusCode"] == 400


def test_disabled_chain_is_refused(quoting, devnet, start_service) -> None:
    config = evm_chains(devnet.deployment)[1].model_copy(update={"disabled": True})
    deployment = devnet.deployment.model_copy(
        update={"chains": (evm_chains(devnet.deployment)[0], config)}
    )
    service = start_service(deployment)
    with httpx.Client(base_url=service.base_url) as client:
        assert wait_for(
            lambda: client.post("/quote/v2", json=_body()).status_code == 400, timeout=10
        )
        body = client.post("/quote/v2", json=_body()).json()
    assert body["errorCode"] == "CHAIN_DISABLED"


def test_a_quote_the_database_refuses_is_503_and_quoting_recovers(
    start_service, postgres_url: str
) -> None:
    """The database refuses new request rows (a constraint, as an operator's mistake would):
    the quote is answered 503 in the error shape, never 200 for a quote that was not stored,
    and quoting works again once the database accepts rows."""
    service = start_service(settings={"database_url": postgres_url})
    dsn = postgres_url.replace("postgresql+asyncpg://", "postgresql://", 1)

    async def alter(statement: str) -> None:
        connection = await asyncpg.connect(dsn)
        try:
            await connection.execute(statement)
        finally:
            await connection.close()

    with httpx.Client(base_url=service.base_url, timeout=10) as client:
        assert wait_for(
            lambda: client.post("/quote/v2", json=_body()).status_code == 200, timeout=10
        )
        asyncio.run(alter("ALTER TABLE requests ADD CONSTRAINT refuse CHECK (false) NOT VALID"))
        refused = client.post("/quote/v2", json=_body())
        assert refused.status_code == 503, refused.text
        validate_against("quote-error", refused.json())
        assert refused.json()["errorCode"] == "SERVICE_UNAVAILABLE"
        asyncio.run(alter("ALTER TABLE requests DROP CONSTRAINT refuse"))
        assert client.post("/quote/v2", json=_body()).status_code == 200
