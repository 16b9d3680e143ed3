"""Each error shape of the spec read into its family's exception, with the spec's fields;
bodies recorded from the devnet service where it answers them, the spec's own otherwise."""

from __future__ import annotations

import json

from conftest import recorded
from crossfill_client import (
    ApiError,
    AttestationError,
    ExecuteError,
    QuoteError,
    RateLimited,
)
from crossfill_client._error_mapping import ErrorFamily, api_error


def _body(name: str) -> bytes:
    return json.dumps(recorded(name)).encode()


def test_coded_quote_error() -> None:
    error = api_error(ErrorFamily.QUOTE, 400, _body("quote_error_coded"))
    assert isinstance(error, QuoteError)
    assert (error.status_code, error.error_code) == (400, "UNSUPPORTED_CHAIN")
    assert error.message == "destinationChainId 999 is not a supported chain"
    assert error.request_id is None and error.failed_call_data is None


def test_detailed_quote_error_carries_the_refused_call() -> None:
    body = {
        "message": "the deposit reverted",
        "errorCode": "EXECUTION_REVERTED",
        "errorData": "0x08c379a0",
        "requestId": "0x" + "ab" * 32,
        "approxSimulatedBlock": 1234,
        "failedCallData": {"from": "0x" + "11" * 20, "to": "0x" + "22" * 20, "data": "0x",
                           "value": "5"},
    }  # fmt: skip
    error = api_error(ErrorFamily.QUOTE, 400, json.dumps(body).encode())
    assert isinstance(error, QuoteError)
    assert error.error_data == "0x08c379a0" and error.approx_simulated_block == 1234
    assert error.request_id == "0x" + "ab" * 32
    assert error.failed_call_data is not None and error.failed_call_data.value == 5


def test_coded_quote_error_with_a_request() -> None:
    body = {"message": "internal", "errorCode": "UNKNOWN_ERROR", "requestId": "0x" + "cd" * 32}
    error = api_error(ErrorFamily.QUOTE, 500, json.dumps(body).encode())
    assert isinstance(error, QuoteError) and error.request_id == "0x" + "cd" * 32


def test_message_only_quote_error() -> None:
    error = api_error(ErrorFamily.QUOTE, 400, b'{"message": "no"}')
    assert isinstance(error, QuoteError) and error.message == "no" and error.error_code is None


def test_execute_error_reads_its_error_field() -> None:
    error = api_error(ErrorFamily.EXECUTE, 400, _body("execute_error"))
    assert isinstance(error, ExecuteError)
    assert error.message.startswith("Invalid request: data.to")
    unauthorized = api_error(ErrorFamily.EXECUTE, 401, b'{"error": "Unauthorized"}')
    assert isinstance(unauthorized, ExecuteError) and unauthorized.message == "Unauthorized"


def test_attestation_error_carries_its_code() -> None:
    error = api_error(ErrorFamily.ATTESTATION, 400, _body("signature_error"))
    assert isinstance(error, AttestationError) and error.code == "REQUEST_NOT_DEPOSITED"


def test_rate_limit_on_any_path_is_rate_limited() -> None:
    for family in ErrorFamily:
        error = api_error(family, 429, b'{"message": "slow down"}', retry_after=2.0)
        assert isinstance(error, RateLimited) and error.retry_after == 2.0


def test_an_answer_that_is_not_json_keeps_its_text() -> None:
    error = api_error(ErrorFamily.GENERIC, 502, b"<html>bad gateway</html>")
    assert type(error) is ApiError and error.body is None
    assert error.message == "<html>bad gateway</html>"
