"""Signing and verifying webhook deliveries. `verify` is for integrators' receivers.

Every delivery carries `X-Signature-Timestamp` (Unix seconds when it was sent) and
`X-Signature-SHA256`: the hex HMAC-SHA256 of `"{timestamp}.{raw body}"` keyed with the API key
the request was quoted with. A receiver checks it over the raw bytes it received:

    from crossfill.webhooks import WebhookVerificationError, verify

    try:
        verify(request_body_bytes, request_headers, api_key, tolerance=300)
    except WebhookVerificationError:
        return 401  # any non-2xx: the sender retries later

`X-Webhook-Id` is unique per event (the same on every retry of it), for de-duplication.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping

TIMESTAMP_HEADER = "X-Signature-Timestamp"
SIGNATURE_HEADER = "X-Signature-SHA256"
EVENT_ID_HEADER = "X-Webhook-Id"
DEFAULT_TOLERANCE_SECONDS = 300.0


class WebhookVerificationError(ValueError):
    """The delivery is not authentic, or too old to accept."""


def signature(key: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode() + b"." + body
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()


def signed_headers(key: str, body: bytes, *, now: float | None = None) -> dict[str, str]:
    timestamp = int(time.time() if now is None else now)
    return {TIMESTAMP_HEADER: str(timestamp), SIGNATURE_HEADER: signature(key, timestamp, body)}


def _header(headers: Mapping[str, str], name: str) -> str:
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    raise WebhookVerificationError(f"missing {name} header")


def verify(
    body: bytes | str,
    headers: Mapping[str, str],
    key: str,
    tolerance: float = DEFAULT_TOLERANCE_SECONDS,
    *,
    now: float | None = None,
) -> None:
    """Raise `WebhookVerificationError` unless the signature matches and the timestamp is
    within `tolerance` seconds of now (either way: clocks drift). Constant-time comparison."""
    raw = body.encode() if isinstance(body, str) else body
    stamp = _header(headers, TIMESTAMP_HEADER)
    if not stamp.isdigit():
        raise WebhookVerificationError(f"{TIMESTAMP_HEADER} is not Unix seconds")
    age = (time.time() if now is None else now) - int(stamp)
    if abs(age) > tolerance:
        raise WebhookVerificationError(f"timestamp is {age:.0f} s away from now")
    expected = signature(key, int(stamp), raw)
    presented = _header(headers, SIGNATURE_HEADER).strip().lower()
    if not hmac.compare_digest(expected, presented):
        raise WebhookVerificationError("signature does not match")
