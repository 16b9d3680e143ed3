"""Which custom webhook headers are accepted when an endpoint is set, and in what form."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crossfill.webhooks.headers import (
    MAX_HEADERS,
    MAX_NAME_LENGTH,
    MAX_TOTAL_BYTES,
    MAX_VALUE_LENGTH,
    HeaderRefused,
    check_headers,
)

TOKEN_SYMBOLS = "!#$%&'*+-.^_`|~"


def test_token_names_and_visible_ascii_values_are_accepted() -> None:
    headers = [("X-Partner", "acme"), (f"X{TOKEN_SYMBOLS}9", 'a "quoted"\tvalue; q=1,2')]
    assert check_headers(headers) == dict(headers)


def test_surrounding_spaces_and_tabs_are_dropped_from_values() -> None:
    assert check_headers([("X-Partner", " \t acme corp\t ")]) == {"X-Partner": "acme corp"}


def test_an_empty_value_is_accepted() -> None:
    assert check_headers([("X-Empty", "")]) == {"X-Empty": ""}


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("", "may not be empty"),
        ("X Partner", "may hold only"),
        ("X-Partner:", "may hold only"),
        ("X-Part\r\nEvil", "may hold only"),
        ("X-Pärtner", "may hold only"),
        ("X-(comment)", "may hold only"),
        (" X-Partner", "may hold only"),
        ("X" * (MAX_NAME_LENGTH + 1), "longer than 64"),
    ],
)
def test_names_that_are_not_short_http_tokens_are_refused(name: str, rule: str) -> None:
    with pytest.raises(HeaderRefused, match=rule) as refused:
        check_headers([(name, "x")])
    quoted_start = repr(name[:MAX_NAME_LENGTH])[:-1]  # long names are quoted cut short
    assert str(refused.value).startswith(f"header {quoted_start}")


@pytest.mark.parametrize(
    "name",
    [
        "Connection",
        "keep-alive",
        "Proxy-Authenticate",
        "PROXY-AUTHORIZATION",
        "Proxy-Connection",
        "TE",
        "Trailer",
        "Trailers",
        "Transfer-Encoding",
        "Upgrade",
    ],
)
def test_hop_by_hop_headers_are_refused(name: str) -> None:
    with pytest.raises(HeaderRefused, match=f"header '{name}': hop-by-hop"):
        check_headers([(name, "x")])


@pytest.mark.parametrize(
    "name",
    [
        "Host",
        "content-length",
        "Content-Type",
        "Content-Encoding",
        "Expect",
        "User-Agent",
        "x-signature-timestamp",
        "X-Signature-SHA256",
        "X-WEBHOOK-ID",
    ],
)
def test_headers_the_service_sets_are_refused(name: str) -> None:
    with pytest.raises(HeaderRefused, match=f"header '{name}': it is set by the service"):
        check_headers([(name, "x")])


def test_names_repeated_in_another_case_are_refused() -> None:
    with pytest.raises(HeaderRefused, match="'x-partner': given twice \\(as 'X-Partner'"):
        check_headers([("X-Partner", "a"), ("x-partner", "b")])


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("acme\r\nX-Evil: 1", "'\\\\r' at position 4"),
        ("acme\nX-Evil: 1", "'\\\\n' at position 4"),
        ("ac\x00me", "'\\\\x00' at position 2"),
        ("ac\x7fme", "'\\\\x7f' at position 2"),
        ("acmé", "'é' at position 3"),
        ("\u2028", "'\\\\u2028' at position 0"),
    ],
)
def test_values_with_control_or_non_ascii_characters_are_refused(value: str, found: str) -> None:
    with pytest.raises(HeaderRefused, match=f"header 'X-Partner': the value .*{found}"):
        check_headers([("X-Partner", value)])


def test_values_longer_than_the_limit_are_refused() -> None:
    assert check_headers([("X-Long", "v" * MAX_VALUE_LENGTH)])
    with pytest.raises(HeaderRefused, match="'X-Long': the value is longer than 1024"):
        check_headers([("X-Long", "v" * (MAX_VALUE_LENGTH + 1))])


def test_more_headers_than_the_limit_are_refused() -> None:
    allowed = [(f"X-H{index}", "v") for index in range(MAX_HEADERS)]
    assert len(check_headers(allowed)) == MAX_HEADERS
    with pytest.raises(HeaderRefused, match="at most 20 custom headers \\(got 21\\)"):
        check_headers([*allowed, ("X-One-More", "v")])


def test_headers_beyond_the_total_size_are_refused() -> None:
    # Each "X-Hnn: <1000 v>\r\n" takes 1009 bytes: 8 fit in 8 KiB, 9 do not.
    fitting = [(f"X-H{index:02}", "v" * 1000) for index in range(8)]
    assert sum(len(n) + len(v) + 4 for n, v in fitting) <= MAX_TOTAL_BYTES
    assert len(check_headers(fitting)) == 8
    with pytest.raises(HeaderRefused, match=r"take 9081 bytes .* at most 8192"):
        check_headers([*fitting, ("X-H08", "v" * 1000)])


@given(
    headers=st.lists(
        st.tuples(st.text(max_size=70), st.text(max_size=40)), max_size=MAX_HEADERS + 2
    )
)
def test_accepted_headers_always_encode_as_single_ascii_lines(
    headers: list[tuple[str, str]],
) -> None:
    try:
        accepted = check_headers(headers)
    except HeaderRefused:
        return
    for name, value in accepted.items():
        line = f"{name}: {value}\r\n".encode("ascii")
        assert line.count(b"\r") == 1 and line.count(b"\n") == 1 and b"\x00" not in line
        assert value == value.strip(" \t")
