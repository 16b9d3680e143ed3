"""Webhooks: signing and verification (for integrators), endpoint configuration."""

from crossfill.webhooks.signing import (
    EVENT_ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    MalformedSignatureHeader,
    WebhookVerificationError,
    signed_headers,
    verify,
)

__all__ = [
    "EVENT_ID_HEADER",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "MalformedSignatureHeader",
    "WebhookVerificationError",
    "signed_headers",
    "verify",
]
