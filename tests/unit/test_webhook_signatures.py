"""The integrators' verification helper against an independent HMAC computation."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crossfill.webhooks import (
    MalformedSignatureHeader,
    WebhookVerificationError,
    signed_headers,
    verify,
)

NOW = 1_795_000_000.0
KEY = "cfk_test-key"


@given(body=st.binary(max_size=2000), key=st.text(min_size=1, max_size=60))
def test_signature_is_hmac_sha256_of_timestamp_dot_body(body: bytes, key: str) -> None:
    headers = signed_headers(key, body, now=NOW)
    expected = hmac.new(key.encode(), f"{int(NOW)}.".encode() + body, hashlib.sha256)
    assert headers["X-Signature-SHA256"] == expected.hexdigest()
    verify(body, {k.lower(): v for k, v in headers.items()}, key, now=NOW + 10)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"body": b'{"tampered":true}'}, "does not match"),
        ({"key": "cfk_other"}, "does not match"),
        ({"now": NOW + 301}, "away from now"),
        ({"now": NOW - 301}, "away from now"),
        ({"drop": "X-Signature-SHA256"}, "missing"),
        ({"drop": "X-Signature-Timestamp"}, "missing"),
        ({"timestamp": "soon"}, "Unix seconds"),
    ],
)
def test_forged_stale_or_incomplete_deliveries_are_rejected(change, reason) -> None:
    body = b'{"event":"request.status.updated"}'
    headers = signed_headers(KEY, body, now=NOW)
    if "drop" in change:
        headers.pop(change["drop"])
    if "timestamp" in change:
        headers["X-Signature-Timestamp"] = change["timestamp"]
    with pytest.raises(WebhookVerificationError, match=reason):
        verify(
            change.get("body", body),
            headers,
            change.get("key", KEY),
            tolerance=300,
            now=change.get("now", NOW),
        )


@pytest.mark.parametrize(
    "timestamp",
    [
        "²",  # str.isdigit() says yes, int() says no
        "".join(chr(0xFF10 + int(digit)) for digit in "1795000000"),  # full-width digits
        "9" * 400,  # overflows a float
        "9" * 5000,  # beyond int()'s digit limit
        "-1795000000",
        "1.795e9",
        "",
    ],
)
def test_a_malformed_timestamp_raises_the_helpers_own_error(timestamp: str) -> None:
    body = b"{}"
    headers = {**signed_headers(KEY, body, now=NOW), "X-Signature-Timestamp": timestamp}
    with pytest.raises(MalformedSignatureHeader, match="Unix seconds"):
        verify(body, headers, KEY, now=NOW)


@pytest.mark.parametrize(
    "presented",
    ["é" * 64, "a" * 63, "g" * 64, "a" * 64 + "é", "", "sha256=" + "a" * 64],
)
def test_a_malformed_signature_raises_the_helpers_own_error(presented: str) -> None:
    body = b"{}"
    headers = {**signed_headers(KEY, body, now=NOW), "X-Signature-SHA256": presented}
    with pytest.raises(MalformedSignatureHeader, match="hex HMAC-SHA256"):
        verify(body, headers, KEY, now=NOW)


def test_the_helpers_errors_stay_value_errors_for_existing_callers() -> None:
    assert issubclass(MalformedSignatureHeader, WebhookVerificationError)
    assert issubclass(WebhookVerificationError, ValueError)


@given(timestamp=st.text(max_size=30), presented=st.text(max_size=80))
def test_whatever_the_headers_hold_only_verification_errors_escape(
    timestamp: str, presented: str
) -> None:
    headers = {"X-Signature-Timestamp": timestamp, "X-Signature-SHA256": presented}
    with pytest.raises(WebhookVerificationError):
        verify(b"{}", headers, KEY, now=NOW)
