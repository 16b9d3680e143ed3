"""HTTP statuses that say the service failed, not the call: 429 and 5xx, Retry-After read."""

from __future__ import annotations

import pytest

from crossfill.chains.http_failures import retry_after_seconds, service_failure
from crossfill.errors import ChainUnreachable, RateLimited


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("2", 2.0),
        ("0.5", 0.5),
        ("-3", 0.0),  # never a wait into the past
        ("Wed, 21 Oct 2026 07:28:00 GMT", None),  # a date: no hint, the backoff applies
        ("soon", None),
        (None, None),
    ],
)
def test_retry_after_is_read_as_seconds(header: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(header) == seconds


def test_429_is_rate_limited_with_its_retry_after() -> None:
    failure = service_failure(429, {"Retry-After": "7"}, "getSlot")
    assert isinstance(failure, RateLimited)
    assert failure.retry_after_seconds == 7.0
    assert "getSlot" in str(failure)


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_5xx_is_unreachable(status: int) -> None:
    failure = service_failure(status, {}, "info")
    assert type(failure) is ChainUnreachable
    assert str(status) in str(failure)


@pytest.mark.parametrize("status", [200, 400, 404, 413])
def test_other_statuses_are_answers_for_the_caller(status: int) -> None:
    assert service_failure(status, {}, "info") is None
