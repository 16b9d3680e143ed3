"""Which webhook endpoints are accepted, and how retries are spaced."""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crossfill.domain.webhook_url import (
    EndpointRefused,
    check_addresses,
    check_endpoint,
    embedded_ipv4,
)
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


@pytest.mark.parametrize(
    "address",
    ["224.0.0.1", "239.255.255.250", "233.252.0.1", "ff0e::1", "ff05::2", "::ffff:224.0.0.251"],
)
def test_production_refuses_multicast_groups(address: str) -> None:
    """Python counts a multicast group as global; no single host answers one."""
    literal = f"[{address}]" if ":" in address else address
    with pytest.raises(EndpointRefused, match="private or local"):
        check_endpoint(f"https://{literal}/hooks", production=True, allow_private=False)
    with pytest.raises(EndpointRefused, match="private or local"):
        check_endpoint(
            "https://hooks.example.com/x",
            production=True,
            allow_private=False,
            resolve=_resolve([address]),
        )


@pytest.mark.parametrize(
    "address",
    [
        "::ffff:169.254.169.254",  # IPv4-mapped
        "::ffff:10.0.0.1",
        "::a9fe:a9fe",  # IPv4-compatible (deprecated)
        "::ffff:0:a9fe:a9fe",  # IPv4-translated
        "64:ff9b::a9fe:a9fe",  # NAT64 well-known prefix
        "64:ff9b::7f00:1",
        "64:ff9b::c0a8:114",
        "64:ff9b:1::808:808",  # local-use NAT64, whatever it carries
        "2002:a9fe:a9fe::",  # 6to4
        "2002:0a00:0001::1",
        "2001:0:4136:e378:8000:63bf:5601:5656",  # Teredo
    ],
)
def test_production_refuses_ipv6_forms_of_private_ipv4(address: str) -> None:
    as_literal = f"https://[{address}]/hooks"
    with pytest.raises(EndpointRefused, match="private or local"):
        check_endpoint(as_literal, production=True, allow_private=False)
    resolved = "https://hooks.example.com/x"
    with pytest.raises(EndpointRefused, match="private or local"):
        check_endpoint(resolved, production=True, allow_private=False, resolve=_resolve([address]))


@pytest.mark.parametrize(
    ("address", "carried"),
    [
        ("::ffff:169.254.169.254", ["169.254.169.254"]),
        ("::a9fe:a9fe", ["169.254.169.254"]),
        ("::ffff:0:a9fe:a9fe", ["169.254.169.254"]),
        ("64:ff9b::a9fe:a9fe", ["169.254.169.254"]),
        ("2002:a9fe:a9fe::1", ["169.254.169.254"]),
        ("2001:0:4136:e378:8000:63bf:5601:5656", ["65.54.227.120", "169.254.169.169"]),
        ("2606:4700::1111", []),
    ],
)
def test_embedded_ipv4_is_found_in_each_form(address: str, carried: list[str]) -> None:
    found = embedded_ipv4(ipaddress.IPv6Address(address))
    assert [str(inner) for inner in found] == carried


@pytest.mark.parametrize("address", ["64:ff9b::5db8:d822", "2002:5db8:d822::1", "2606:4700::1111"])
def test_production_accepts_ipv6_forms_of_public_addresses(address: str) -> None:
    url = "https://hooks.example.com/x"
    resolve = _resolve([address])
    assert check_endpoint(url, production=True, allow_private=False, resolve=resolve) == url


def test_production_accepts_public_https() -> None:
    url = "https://hooks.example.com/crossfill"
    resolve = _resolve(["93.184.216.34"])
    assert check_endpoint(url, production=True, allow_private=False, resolve=resolve) == url


@given(attempt=st.integers(1, 30), seed=st.integers(0, 2**32))
def test_retry_delays_grow_within_half_jittered_bounds(attempt: int, seed: int) -> None:
    ceiling = min(300.0, 1.0 * 2 ** (attempt - 1))
    delay = retry_delay(attempt, base=1.0, cap=300.0, rng=random.Random(seed))
    assert ceiling / 2 <= delay <= ceiling


def test_a_name_is_refused_by_any_one_of_its_addresses_and_without_any() -> None:
    check_addresses("hooks.example", ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"])
    with pytest.raises(EndpointRefused, match=r"hooks.example is a private .*\(10.0.0.7\)"):
        check_addresses("hooks.example", ["93.184.216.34", "10.0.0.7"])
    with pytest.raises(EndpointRefused, match="does not resolve"):
        check_addresses("hooks.example", [])
