"""Which webhook endpoints are accepted, and how retries are spaced."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crossfill.domain.webhook_url import EndpointRefused, check_endpoint
from crossfill.workers.webhooks import retry_delay


def _resolve(addresses: list[str]) -> Callable[[str], list[str]]:
    return lambda _host: addresses


@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/hook", "example.com/hook", "https:///nohost", "javascript:alert(1)"],
)
def test_only_http_urls_with_a_host(url: str) -> None:
    with pytest.raises(EndpointRefused):
        check_endpoint(url, production=False, allow_private=False)


def test_devnet_allows_local_http() -> None:
    url = "http://127.0.0.1:9000/hooks"
    assert check_endpoint(url, production=False, allow_private=False) == url


@pytest.mark.parametrize(
    ("url", "addresses"),
    [
        ("http://hooks.example.com/x", ["93.184.216.34"]),  # plain http
        ("https://127.0.0.1/x", []),
        ("https://[::1]/x", []),
        ("https://10.1.2.3/x", []),
        ("https://169.254.169.254/latest", []),  # cloud metadata
        ("https://internal.example.com/x", ["192.168.1.20"]),  # resolves privately
    ],
)
def test_production_refuses_plain_http_and_private_addresses(url, addresses) -> None:
    with pytest.raises(EndpointRefused):
        check_endpoint(url, production=True, allow_private=False, resolve=_resolve(addresses))
    assert check_endpoint(url, production=True, allow_private=True) == url


def test_production_accepts_public_https() -> None:
    url = "https://hooks.example.com/crossfill"
    resolve = _resolve(["93.184.216.34"])
    assert check_endpoint(url, production=True, allow_private=False, resolve=resolve) == url


@given(attempt=st.integers(1, 30), seed=st.integers(0, 2**32))
def test_retry_delays_grow_within_half_jittered_bounds(attempt: int, seed: int) -> None:
    ceiling = min(300.0, 1.0 * 2 ** (attempt - 1))
    delay = retry_delay(attempt, base=1.0, cap=300.0, rng=random.Random(seed))
    assert ceiling / 2 <= delay <= ceiling
