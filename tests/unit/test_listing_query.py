"""Listing parameters: defaults, value normalisation, cursors, and the v2 calendar."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crossfill.domain.deprecation import V2Schedule, parse_reductions
from crossfill.domain.listing_query import (
    Condition,
    Cursor,
    ListingError,
    SortBy,
    parse_listing,
)


def test_defaults_follow_the_spec() -> None:
    query = parse_listing({})
    assert (query.sort_by, query.direction, query.limit) == (SortBy.CREATED_AT, "desc", 20)
    assert parse_listing({"sortBy": ["amountUsd"]}).direction == "asc"
    assert parse_listing({"sortBy": ["updatedAt"]}).direction == "desc"


def test_values_are_normalised_and_split() -> None:
    query = parse_listing(
        {
            "user": ["0xABCDEF0000000000000000000000000000000001"],
            "status": ["success,refund", "failure"],
            "currencyInSymbol": ["usdc"],
            "originChainId": ["10"],
        }
    )
    assert set(query.conditions) == {
        Condition("user", ("0xabcdef0000000000000000000000000000000001",)),
        Condition("status", ("success", "refund", "failure")),
        Condition("currencyInSymbol", ("USDC",)),
        Condition("originChainId", (10,)),
    }


def test_filters_groups_keep_negation_and_arrays() -> None:
    query = parse_listing({"filters": ['[{"not:status": ["success", "refund"], "chainId": 1}]']})
    assert query.groups == (
        (Condition("status", ("success", "refund"), negated=True), Condition("chainId", (1,))),
    )


@pytest.mark.parametrize(
    "params",
    [
        {"id": ["garbage"]},
        {"id": ["0x1234"]},
        {"orderId": ["0x" + "zz" * 32]},
        {"id": ["0x" + "ab" * 32 + ",nope"]},
        {"filters": ['[{"orderId": "garbage"}]']},
    ],
)
def test_an_id_that_is_no_32_byte_hash_is_refused(params: dict[str, list[str]]) -> None:
    """Else `?id=garbage` answers 200 with an empty page, as if the request did not exist."""
    with pytest.raises(ListingError, match="32-byte id"):
        parse_listing(params)


def test_v2_refuses_a_malformed_id_too() -> None:
    with pytest.raises(ListingError, match="32-byte id"):
        parse_listing({"id": ["garbage"]}, v2=True)


def test_ids_are_compared_lower_case() -> None:
    query = parse_listing({"id": ["0x" + "AB" * 32], "orderId": ["0x" + "cd" * 32]})
    assert set(query.conditions) == {
        Condition("id", ("0x" + "ab" * 32,)),
        Condition("orderId", ("0x" + "cd" * 32,)),
    }


def test_v2_has_its_own_parameters() -> None:
    query = parse_listing({"hash": ["0xAB"], "referrer": ["app"], "term": ["x"]}, v2=True)
    assert {c.field for c in query.conditions} == {"hash", "referrer"}  # term is v3 only
    with pytest.raises(ListingError):
        parse_listing({"sortBy": ["amountUsd"]}, v2=True)


@given(
    direction=st.sampled_from(["asc", "desc"]),
    amount=st.integers(0, 2**63 - 1),
    moment=st.datetimes(timezones=st.just(UTC)),
    request_id=st.binary(min_size=32, max_size=32).map(lambda raw: "0x" + raw.hex()),
)
def test_cursors_round_trip(direction: str, amount: int, moment: datetime, request_id: str) -> None:
    for cursor in (
        Cursor(SortBy.AMOUNT_USD, direction, amount, request_id),
        Cursor(SortBy.CREATED_AT, direction, moment.isoformat(), request_id),
        Cursor(SortBy.UPDATED_AT, direction, moment.isoformat(), request_id),
    ):
        assert Cursor.decode(cursor.encode()) == cursor


def test_a_cursor_must_match_its_sort() -> None:
    request_id = "0x" + "01" * 32
    token = Cursor(SortBy.CREATED_AT, "desc", "2026-11-21T00:00:00+00:00", request_id).encode()
    assert parse_listing({"continuation": [token]}).cursor is not None
    with pytest.raises(ListingError, match="different sortBy"):
        parse_listing({"continuation": [token], "sortDirection": ["asc"]})


@pytest.mark.parametrize(
    ("day", "deprecated", "share", "retired"),
    [
        (datetime(2026, 7, 21, tzinfo=UTC), False, 1.0, False),
        (datetime(2026, 7, 22, tzinfo=UTC), True, 1.0, False),
        (datetime(2026, 9, 1, tzinfo=UTC), True, 0.5, False),
        (datetime(2026, 10, 15, tzinfo=UTC), True, 0.25, False),
        (datetime(2026, 11, 23, 23, 59, tzinfo=UTC), True, 0.1, False),
        (datetime(2026, 11, 24, tzinfo=UTC), True, 0.1, True),
    ],
)
def test_v2_schedule_by_date(day: datetime, deprecated: bool, share: float, retired: bool) -> None:
    schedule = V2Schedule()
    assert schedule.deprecated(day) is deprecated
    assert ("Deprecation" in schedule.headers(day)) is deprecated
    assert schedule.rate_share(day) == share
    assert schedule.retired(day) is retired


def test_reductions_are_configurable_and_checked() -> None:
    schedule = V2Schedule(parse_reductions("2026-08-01:0.9"))
    assert schedule.rate_share(datetime(2026, 12, 1, tzinfo=UTC)) == 0.9
    with pytest.raises(ValueError):
        parse_reductions("2026-08-01:1.5")


@pytest.mark.parametrize(
    "params",
    [
        {"limit": ["²"]},
        {"limit": ["\uff15"]},
        {"startTimestamp": ["999999999999999999"]},
        {"endTimestamp": ["999999999999999999"]},
        {"originChainId": [str(2**63)]},
        {"filters": [f'[{{"originChainId": {2**63}}}]']},
        {"filters": [f'[{{"not:destinationChainId": [{2**63}]}}]']},
        {"filters": ['[{"id": "\\ud800"}]']},
        {"filters": ["[" * 2_000 + "]" * 2_000]},
        {"filters": ['[{"user": ' + "[" * 2_000 + "]" * 2_000 + "}]"]},
        {"user": ["0xab\n"]},
    ],
)
def test_hostile_parameters_are_listing_errors(params: dict[str, list[str]]) -> None:
    with pytest.raises(ListingError):
        parse_listing(params)


def test_a_cursor_with_an_out_of_range_amount_is_refused() -> None:
    request_id = "0x" + "11" * 32
    forged = Cursor(SortBy.AMOUNT_USD, "asc", 2**63, request_id).encode()
    with pytest.raises(ListingError):
        parse_listing({"sortBy": ["amountUsd"], "continuation": [forged]})
    fine = Cursor(SortBy.AMOUNT_USD, "asc", 2**63 - 1, request_id).encode()
    assert parse_listing({"sortBy": ["amountUsd"], "continuation": [fine]}).cursor is not None
