"""HTTP answers that say the service, not the call, failed: 429 (rate limited, retried no
sooner than its Retry-After) and 5xx (unreachable, retried as a dropped connection is). The
SVM and perps clients read their replies through `service_failure`; the EVM client's aiohttp
errors carry the same header."""

from __future__ import annotations

from collections.abc import Mapping

from crossfill.errors import ChainUnreachable, RateLimited


def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After header as seconds to wait (None when absent or not a number: an HTTP date
    is read as no hint, and the caller's own backoff applies)."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def service_failure(status: int, headers: Mapping[str, str], what: str) -> ChainUnreachable | None:
    """The outcome of an HTTP status that carries no answer to `what`; None for any other."""
    if status == 429:
        return RateLimited(
            f"{what}: rate limited",
            retry_after_seconds=retry_after_seconds(headers.get("Retry-After")),
        )
    if status >= 500:
        return ChainUnreachable(f"{what}: HTTP {status}")
    return None
