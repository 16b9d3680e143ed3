"""Quote errors, one table: each case's status, `errorCode` and shape (service interface,
Errors): Detailed for a quote refused by simulating it, Coded for a refused body, Coded with
request for an unexpected failure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from eth_utils.abi import function_signature_to_4byte_selector
from web3 import Web3

from crossfill.app import quotes
from crossfill.contracts.calldata import erc20_transfer
from crossfill.devnet import accounts
from crossfill.kinds.evm.config import evm_chain
from tests.conftest import RunningDevnet
from tests.e2e.bridging import DESTINATION, ORIGIN, native_bridge, rpc_urls, usdc
from tests.e2e.conftest import validate_against
from tests.support.waiting import wait_for

DETAILED = ("errorData", "requestId", "approxSimulatedBlock", "failedCallData")
INSUFFICIENT_BALANCE = function_signature_to_4byte_selector(
    "InsufficientBalance(address,uint256,uint256)"
)
SOMEONE = "0x" + "5a" * 20


def _usdc_transfer(devnet: RunningDevnet, amount: int) -> dict[str, str]:
    """A destination call moving `amount` of the Router's USDC (it holds none)."""
    data = erc20_transfer(SOMEONE, amount)
    return {"to": usdc(devnet, DESTINATION), "value": "0", "data": "0x" + data.hex()}


def _wrap(devnet: RunningDevnet, value: int) -> dict[str, str]:
    """A destination call wrapping `value` wei into WETH (a storage write: real gas)."""
    weth = evm_chain(devnet.deployment, DESTINATION).contracts.weth  # type: ignore[union-attr]
    selector = function_signature_to_4byte_selector("deposit()")
    return {"to": str(weth), "value": str(value), "data": "0x" + selector.hex()}


@dataclass(frozen=True)
class ErrorCase:
    name: str
    overrides: dict[str, Any]
    error_code: str
    detailed: bool = False
    status: int = 400
    # Fields of the Detailed shape the case pins beyond their presence.
    error_data_prefix: str | None = None
    message_has: str = ""


def _cases(devnet: RunningDevnet) -> list[ErrorCase]:
    return [
        ErrorCase(
            "txs that revert in simulation",
            {"txs": [_usdc_transfer(devnet, 10**12)]},
            "INVALID_EXTRA_TXS",
            detailed=True,
            error_data_prefix="0x" + INSUFFICIENT_BALANCE.hex(),
            message_has="fail in simulation",
        ),
        ErrorCase(
            "txs that need more gas than budgeted",
            {"txs": [_wrap(devnet, 1000)] * 3, "txsGasLimit": 100},
            "INVALID_EXTRA_TXS",
            detailed=True,
            error_data_prefix="0x",
            message_has="txsGasLimit",
        ),
        ErrorCase("an unknown chain", {"originChainId": 1}, "UNSUPPORTED_CHAIN"),
        ErrorCase(
            "external liquidity, none configured",
            {"useExternalLiquidity": True},
            "UNSUPPORTED_ROUTE",
            message_has="none is configured",
        ),
        ErrorCase(
            "a recovery address without deposit addresses",
            {"recoveryAddress": SOMEONE},
            "UNSUPPORTED_EXECUTION_TYPE",
            message_has="useDepositAddress",
        ),
        ErrorCase(
            "a fee payer for a deposit on an EVM chain",
            {"depositFeePayer": SOMEONE},
            "UNSUPPORTED_EXECUTION_TYPE",
            message_has="depositFeePayer",
        ),
        ErrorCase(
            "origin gas overhead without usePermit",
            {"originGasOverhead": 1000},
            "INVALID_INPUT",
            message_has="usePermit",
        ),
        ErrorCase(
            "a permit of ether",
            {"usePermit": True},
            "UNSUPPORTED_EXECUTION_TYPE",
            message_has="usePermit",
        ),
        ErrorCase(
            "protocol v1 for an ERC-20",
            {
                "protocolVersion": "v1",
                "originCurrency": usdc(devnet, ORIGIN),
                "destinationCurrency": usdc(devnet, DESTINATION),
                "amount": str(10**7),
            },
            "UNSUPPORTED_EXECUTION_TYPE",
            message_has="needs v2",
        ),
        ErrorCase(
            "a gas top-up of a native output",
            {"topupGas": True},
            "UNSUPPORTED_ROUTE",
            message_has="topupGas",
        ),
        ErrorCase(
            "true exact output of an expected output",
            {
                "destinationCurrency": usdc(devnet, DESTINATION),
                "tradeType": "EXPECTED_OUTPUT",
                "amount": "1000000",
                "enableTrueExactOutput": True,
            },
            "UNSUPPORTED_EXECUTION_TYPE",
            message_has="enableTrueExactOutput",
        ),
        ErrorCase("a bad recipient", {"recipient": "0x12"}, "INVALID_RECIPIENT"),
        ErrorCase("a malformed field", {"originChainId": "900001"}, "INVALID_INPUT"),
        ErrorCase("an amount below the fees", {"amount": "1000"}, "AMOUNT_TOO_LOW"),
        ErrorCase(
            "txs after a swap",
            {"destinationCurrency": usdc(devnet, DESTINATION), "txs": [_usdc_transfer(devnet, 0)]},
            "EXTRA_TXS_NOT_SUPPORTED",
        ),
    ]


@pytest.fixture
def quoting(client: httpx.Client) -> httpx.Client:
    body = native_bridge(accounts.users()[0].address)
    assert wait_for(lambda: client.post("/quote/v2", json=body).status_code == 200, timeout=10)
    return client


def test_every_quote_error_in_its_shape(quoting, devnet) -> None:
    user = accounts.users()[0].address
    destination = evm_chain(devnet.deployment, DESTINATION)
    assert destination is not None
    for case in _cases(devnet):
        response = quoting.post("/quote/v2", json=native_bridge(user, **case.overrides))
        assert response.status_code == case.status, (case.name, response.text)
        body = response.json()
        validate_against("quote-error", body)
        assert body["errorCode"] == case.error_code, case.name
        assert body["statusCode"] == case.status
        assert case.message_has in body["message"], case.name
        if not case.detailed:
            assert not set(DETAILED) & set(body), case.name
            continue
        validate_against("quote-error-detailed", body)
        assert case.error_data_prefix is not None
        assert body["errorData"].startswith(case.error_data_prefix), case.name
        # What was simulated is the fill itself: the solver calling the destination's Filler.
        call = body["failedCallData"]
        assert call["from"].lower() == devnet.deployment.solver.address.lower()
        assert call["to"].lower() == destination.contracts.filler.lower()
        assert 0 < int(call["value"]) < 10**17  # the native output the fill sends
        head = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION])).eth.block_number
        assert 0 < body["approxSimulatedBlock"] <= head
        # The refused quote's id names nothing stored.
        status = quoting.get("/intents/status/v3", params={"requestId": body["requestId"]})
        assert status.status_code == 404


def test_an_unexpected_failure_is_a_500_coded_with_its_request_id(
    quoting, monkeypatch, capsys, caplog
) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("planning broke")

    monkeypatch.setattr(quotes, "plan_quote", broken)
    # On a connection of its own: uvicorn closes the connection an exception escaped on.
    failed = httpx.post(
        f"{quoting.base_url}/quote/v2",
        json=native_bridge(accounts.users()[0].address),
        timeout=30,
    )
    monkeypatch.undo()
    assert failed.status_code == 500
    body = failed.json()
    validate_against("quote-error", body)
    assert body["errorCode"] == "UNKNOWN_ERROR" and body["statusCode"] == 500
    assert body["requestId"].startswith("0x") and len(body["requestId"]) == 66
    assert not {"errorData", "failedCallData"} & set(body)
    # The log line reaches stdout, or pytest's log capture when an earlier test routed
    # structlog through the standard library's logging.
    logged = capsys.readouterr()
    assert body["requestId"] in logged.out + logged.err + caplog.text


def test_quote_answers_and_refusals_carry_the_cors_headers_of_every_route(quoting) -> None:
    """Served by the quote front (an answer, a refusal from planning), by FastAPI's route (a
    body that does not validate) or by another route: the same CORS headers."""
    user = accounts.users()[0].address
    origin = {"Origin": "https://app.example"}
    answers = {
        "served": quoting.post("/quote/v2", json=native_bridge(user), headers=origin),
        "refused": quoting.post(
            "/quote", json=native_bridge(user, originChainId=1), headers=origin
        ),
        "invalid": quoting.post("/quote/v2", json={"user": user}, headers=origin),
        "other route": quoting.get("/chains", headers=origin),
    }
    assert [answer.status_code for answer in answers.values()] == [200, 400, 400, 200]
    for name, answer in answers.items():
        assert answer.headers["access-control-allow-origin"] == "*", name
        assert answer.headers["vary"] == "Origin", name
    without = quoting.post("/quote/v2", json=native_bridge(user))
    assert "access-control-allow-origin" not in without.headers
    assert without.headers["content-type"] == "application/json"
