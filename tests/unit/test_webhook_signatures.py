"""The integrators' verification helper against an independent HMAC computation."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crossfill.webhooks import WebhookVerificationError, signed_headers, verify

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
