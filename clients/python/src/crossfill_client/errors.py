"""Every failure the client raises, one class per family:

```
ClientError
├── TransportError            the service or a chain node could not be reached (after retries)
├── ResponseError (ValueError) an answer that is not what the interface says
├── ApiError                  the service answered an error: status_code, message, body
│   ├── QuoteError            the quote paths: error_code, request_id, error_data,
│   │                         approx_simulated_block, failed_call_data
│   ├── ExecuteError          POST /execute ({error}): request_id, details
│   ├── AttestationError      GET /requests/{id}/signature ({message, code}): code
│   └── RateLimited           429 past the retries, on any path: retry_after
├── ExecutionError            a quote's step could not be carried out: step_id
│   ├── ChainRpcError         a node's JSON-RPC error: code, data
│   ├── TransactionReverted   a transaction landed and failed: chain_id, tx_hash
│   └── ExchangeRefused       the perps exchange refused a signed action
├── RequestFailed             the request ended in failure or refund: the status record
└── WaitTimeout (TimeoutError) the request did not end in time: the last status record
```

`ApiError`s are made from the answer by `api_error` (`_error_mapping`), which reads the
shape the spec gives each path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import JsonValue

if TYPE_CHECKING:
    from crossfill_client.models import FailedCallData, StatusRecord


class ClientError(Exception):
    """The root of every error this client raises."""


class TransportError(ClientError):
    """The service (or a chain node) could not be reached, or the connection broke, on every
    attempt the retry policy allowed."""


class ResponseError(ClientError, ValueError):
    """An answer the client cannot read as the interface describes it (not JSON, a missing
    field, a wrong type)."""


class ApiError(ClientError):
    """The service answered with an error status. `message` is the body's `message` (or
    `error`); `body` is the whole JSON body (None when it was not JSON)."""

    def __init__(self, status_code: int, message: str, body: JsonValue = None) -> None:
        super().__init__(f"{status_code}: {message}")
        self.status_code = status_code
        self.message = message
        self.body = body


class QuoteError(ApiError):
    """A refused quote. Its four shapes (message only; coded; coded with a request; detailed)
    differ by which fields are set."""

    def __init__(
        self,
        status_code: int,
        message: str,
        body: JsonValue = None,
        *,
        error_code: str | None = None,
        request_id: str | None = None,
        error_data: str | None = None,
        approx_simulated_block: int | None = None,
        failed_call_data: FailedCallData | None = None,
    ) -> None:
        super().__init__(status_code, message, body)
        self.error_code = error_code
        self.request_id = request_id
        self.error_data = error_data
        self.approx_simulated_block = approx_simulated_block
        self.failed_call_data = failed_call_data


class ExecuteError(ApiError):
    """A refused gasless execution: `{error}`, or `{error, message, requestId, details}`."""

    def __init__(
        self,
        status_code: int,
        message: str,
        body: JsonValue = None,
        *,
        request_id: str | None = None,
        details: JsonValue = None,
    ) -> None:
        super().__init__(status_code, message, body)
        self.request_id = request_id
        self.details = details


class AttestationError(ApiError):
    """A refused attestation: `{message, code}` (e.g. `REQUEST_NOT_DEPOSITED`)."""

    def __init__(
        self, status_code: int, message: str, body: JsonValue = None, *, code: str | None = None
    ) -> None:
        super().__init__(status_code, message, body)
        self.code = code


class RateLimited(ApiError):
    """429, still after the retries; `retry_after` is what the last answer asked to wait
    (seconds, None when it did not say)."""

    def __init__(
        self,
        status_code: int,
        message: str,
        body: JsonValue = None,
        *,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(status_code, message, body)
        self.retry_after = retry_after


class ExecutionError(ClientError):
    """A step of a quote could not be carried out; `step_id` names it (None outside a step)."""

    def __init__(self, message: str, *, step_id: str | None = None) -> None:
        super().__init__(message)
        self.step_id = step_id


class ChainRpcError(ExecutionError):
    """A chain node answered a JSON-RPC call with an error."""

    def __init__(self, method: str, code: int, message: str, data: JsonValue = None) -> None:
        super().__init__(f"{method}: {code} {message}")
        self.method = method
        self.code = code
        self.rpc_message = message
        self.data = data


class TransactionReverted(ExecutionError):
    """A step's transaction landed and failed on chain."""

    def __init__(self, chain_id: int, tx_hash: str, *, step_id: str | None = None) -> None:
        super().__init__(f"transaction {tx_hash} failed on chain {chain_id}", step_id=step_id)
        self.chain_id = chain_id
        self.tx_hash = tx_hash


class ExchangeRefused(ExecutionError):
    """The perps exchange answered a signed action with `status: err`; `reason` is its
    message."""

    def __init__(self, reason: str, *, step_id: str | None = None) -> None:
        super().__init__(f"the exchange refused the action: {reason}", step_id=step_id)
        self.reason = reason


class RequestFailed(ClientError):
    """The request ended in `failure` or `refund`; `record` is its last status record."""

    def __init__(self, record: StatusRecord) -> None:
        reason = record.fail_reason or "no reason given"
        super().__init__(f"request ended in {record.status}: {reason}")
        self.record = record


class WaitTimeout(ClientError, TimeoutError):
    """The request had not ended when the wait's time ran out; `record` is the last status
    seen (None if none was)."""

    def __init__(self, request_id: str, record: StatusRecord | None) -> None:
        shown = record.status if record is not None else "unknown"
        super().__init__(f"request {request_id} still {shown}")
        self.request_id = request_id
        self.record = record
