"""Signing and verifying webhook deliveries. `verify` is for integrators' receivers.

Every delivery carries `X-Signature-Timestamp` (Unix seconds when it was sent) and
`X-Signature-SHA256`: the hex HMAC-SHA256 of `"{timestamp}.{raw body}"` keyed with the API key
the request was quoted with. A receiver checks it over the raw bytes it received:

    from crossfill.webhooks import WebhookVerificationError, verify

    try:
        verify(request_body_bytes, request_headers, api_key, tolerance=300)
    except WebhookVerificationError:  # MalformedSignatureHeader included
        return 401  # any non-2xx: the sender retries later

`X-Webhook-Id` is unique per event (the same on every retry of it), for de-duplication.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from collections.abc import Mapping

TIMESTAMP_HEADER = "X-Signature-Timestamp"
SIGNATURE_HEADER = "X-Signature-SHA256"
EVENT_ID_HEADER = "X-Webhook-Id"
DEFAULT_TOLERANCE_SECONDS = 300.0
# ASCII only (`str.isdigit` also takes "²" and other digits `int` refuses); 15 digits are
# far beyond any real clock yet small enough to subtract from a float.
UNIX_SECONDS = re.compile(r"[0-9]{1,15}")
HEX_SHA256 = re.compile(r"[0-9a-f]{64}")


class WebhookVerificationError(ValueError):
    """The delivery is not authentic, or too old to accept."""


class MalformedSignatureHeader(WebhookVerificationError):
    """A signature header is not in the form Crossfill sends: not from Crossfill."""


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
    within `tolerance` seconds of now (either way: clocks drift). Constant-time comparison.

    Headers that are missing or malformed (`MalformedSignatureHeader`) raise the same family:
    nothing else escapes, whatever a sender puts in them."""
    raw = body.encode() if isinstance(body, str) else body
    stamp = _header(headers, TIMESTAMP_HEADER).strip()
    if not UNIX_SECONDS.fullmatch(stamp):
        raise MalformedSignatureHeader(f"{TIMESTAMP_HEADER} is not Unix seconds")
    age = (time.time() if now is None else now) - int(stamp)
    if abs(age) > tolerance:
        raise WebhookVerificationError(f"timestamp is {age:.0f} s away from now")
    presented = _header(headers, SIGNATURE_HEADER).strip().lower()
    if not HEX_SHA256.fullmatch(presented):
        raise MalformedSignatureHeader(f"{SIGNATURE_HEADER} is not a hex HMAC-SHA256")
    expected = signature(key, int(stamp), raw)
    if not hmac.compare_digest(expected, presented):
        raise WebhookVerificationError("signature does not match")
