"""The client address behind (or without) proxies: `X-Forwarded-For` only from trusted ones."""

from __future__ import annotations

from ipaddress import ip_network

import pytest
from starlette.requests import Request
from structlog.testing import capture_logs

from crossfill.api.auth import Caller
from crossfill.api.client_address import UntrustedProxyWarning, client_address, client_group

PROXIES = (ip_network("10.0.0.0/8"), ip_network("127.0.0.1/32"))


def _request(peer: str, *forwarded_for: str) -> Request:
    headers = [(b"x-forwarded-for", value.encode()) for value in forwarded_for]
    return Request({"type": "http", "client": (peer, 40000), "headers": headers})


def test_without_trusted_proxies_the_peer_is_the_client_whatever_it_forwards() -> None:
    assert client_address(_request("127.0.0.1", "203.0.113.5"), ()) == "127.0.0.1"


def test_an_untrusted_peer_cannot_forward_for_anyone() -> None:
    assert client_address(_request("198.51.100.1", "203.0.113.5"), PROXIES) == "198.51.100.1"


@pytest.mark.parametrize(
    ("forwarded_for", "client"),
    [
        (["203.0.113.5"], "203.0.113.5"),
        # What the client wrote is left of what our proxies appended: ignored.
        (["198.51.100.66, 203.0.113.5"], "203.0.113.5"),
        (["198.51.100.66, 203.0.113.5, 10.1.2.3"], "203.0.113.5"),
        (["198.51.100.66", "203.0.113.5, 10.1.2.3"], "203.0.113.5"),
        (["not-an-address, 203.0.113.5"], "203.0.113.5"),
        # Every hop one of ours: the left-most is the client.
        (["10.9.9.9, 10.1.2.3"], "10.9.9.9"),
        ([], "127.0.0.1"),
        (["::ffff:203.0.113.5"], "203.0.113.5"),
    ],
)
def test_behind_trusted_proxies_the_rightmost_untrusted_hop_is_the_client(
    forwarded_for: list[str], client: str
) -> None:
    assert client_address(_request("127.0.0.1", *forwarded_for), PROXIES) == client


def test_one_address_has_one_spelling() -> None:
    assert client_address(_request("::ffff:198.51.100.1"), ()) == "198.51.100.1"
    assert client_address(_request("2001:db8:0:0::1"), ()) == "2001:db8::1"


def test_a_request_without_a_peer_is_unknown() -> None:
    assert client_address(Request({"type": "http", "headers": []}), PROXIES) == "unknown"


@pytest.mark.parametrize(
    ("address", "group"),
    [
        ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"),
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:3::1", "2001:db8:1:3::/64"),
        ("203.0.113.5", "203.0.113.5"),
        ("unknown", "unknown"),
    ],
)
def test_an_ipv6_client_is_limited_by_its_64(address: str, group: str) -> None:
    assert client_group(address) == group


def test_two_addresses_of_one_ipv6_network_share_a_bucket_and_a_guess_budget() -> None:
    one = Caller(None, client_address(_request("2001:db8:1:2::1"), ()))
    other = Caller(None, client_address(_request("2001:db8:1:2:ffff::7"), ()))
    assert one.address != other.address
    assert one.bucket == other.bucket == "ip:2001:db8:1:2::/64"
    assert Caller(7, one.address).bucket == "key:7"


@pytest.mark.parametrize("peer", ["10.1.2.3", "192.168.0.9", "127.0.0.1", "fd00::5"])
def test_a_private_peer_without_trusted_proxies_is_warned_about_once(peer: str) -> None:
    warning = UntrustedProxyWarning()
    with capture_logs() as logged:
        warning.saw(peer)
        warning.saw(peer)
    assert [entry["log_level"] for entry in logged] == ["warning"]
    assert "CROSSFILL_TRUSTED_PROXIES" in logged[0]["event"]


def test_a_public_peer_is_no_reason_to_warn() -> None:
    warning = UntrustedProxyWarning()
    with capture_logs() as logged:
        warning.saw("8.8.8.8")
        warning.saw("2606:4700::1111")
        warning.saw("unknown")
    assert logged == []
