"""An error answer read into the exception of its family (`errors`): the path says which
shape the body has, the status says whether it was a rate limit."""

from __future__ import annotations

from enum import Enum

from pydantic import JsonValue, TypeAdapter, ValidationError

from crossfill_client.errors import (
    ApiError,
    AttestationError,
    ExecuteError,
    QuoteError,
    RateLimited,
)
from crossfill_client.models._base import WireModel
from crossfill_client.models.quote import FailedCallData


class ErrorFamily(Enum):
    """Which error shape a path answers with."""

    GENERIC = "generic"  # {message, statusCode}
    QUOTE = "quote"  # {message, errorCode?, requestId?, errorData?, ...}
    EXECUTE = "execute"  # {error, message?, requestId?, details?}
    ATTESTATION = "attestation"  # {message, code}


class _ErrorBody(WireModel):
    message: str | None = None
    error: str | None = None
    error_code: str | None = None
    request_id: str | None = None
    error_data: str | None = None
    approx_simulated_block: int | None = None
    failed_call_data: FailedCallData | None = None
    code: str | None = None
    details: JsonValue = None


_JSON: TypeAdapter[JsonValue] = TypeAdapter(JsonValue)


def _read_body(content: bytes) -> tuple[JsonValue, _ErrorBody]:
    try:
        document = _JSON.validate_json(content) if content else None
    except ValidationError:
        return None, _ErrorBody()
    if not isinstance(document, dict):
        return document, _ErrorBody()
    try:
        return document, _ErrorBody.model_validate(document)
    except ValidationError:  # a field of another type than the spec's: keep the message only
        message = document.get("message")
        return document, _ErrorBody(message=message if isinstance(message, str) else None)


def api_error(
    family: ErrorFamily,
    status_code: int,
    content: bytes,
    *,
    retry_after: float | None = None,
) -> ApiError:
    """The exception for an error answer of `status_code` with body `content`."""
    document, body = _read_body(content)
    message = body.message or body.error or content.decode("utf-8", "replace")[:200] or "error"
    raw = document
    if status_code == 429:
        return RateLimited(status_code, message, raw, retry_after=retry_after)
    if family is ErrorFamily.QUOTE:
        return QuoteError(
            status_code,
            message,
            raw,
            error_code=body.error_code,
            request_id=body.request_id,
            error_data=body.error_data,
            approx_simulated_block=body.approx_simulated_block,
            failed_call_data=body.failed_call_data,
        )
    if family is ErrorFamily.EXECUTE:
        return ExecuteError(
            status_code,
            body.error or message,
            raw,
            request_id=body.request_id,
            details=body.details,
        )
    if family is ErrorFamily.ATTESTATION:
        return AttestationError(status_code, message, raw, code=body.code)
    return ApiError(status_code, message, raw)
