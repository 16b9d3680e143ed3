"""GET /requests filtering, sorting and paging against a plain-Python reference, on both backends.

Hypothesis draws parameter combinations (fields, `filters` groups with `not:` and arrays,
ranges, features, sorts, page sizes) from values that occur in the data, so most queries match
something; every query is walked page by page through its continuation.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncEngine

from crossfill.domain.enums import FEATURES
from crossfill.domain.listing_query import FIELDS, ListingQuery, parse_listing
from crossfill.store import api_keys, listing
from crossfill.store.db import session_factory
from crossfill.store.tables import Request
from tests.integration.storage.listing_reference import Reference
from tests.support.synthetic import BASE_TIME, STATUSES, insert_synthetic, synthetic_requests

ROWS = 240
RANGE_NAMES = [
    "startTimestamp",
    "endTimestamp",
    "startBlock",
    "endBlock",
    "fillTimeMin",
    "fillTimeMax",
]


KEY_NAMES = ("KEY_A", "KEY_B")  # stand-ins in drawn parameters for the two keys' secrets
DATA = synthetic_requests(ROWS, api_key_ids=(None, 1, 2))  # fresh databases number keys 1, 2


@dataclass(repr=False)
class Seeded:
    engine: AsyncEngine
    reference: Reference
    secrets: dict[str, str]  # stand-in → secret


def _values() -> dict[str, list[str]]:
    """Field → values that occur in the data (as query strings), plus one that never does."""
    reference = Reference(DATA.requests, DATA.transactions)
    values: dict[str, set[str]] = {name: set() for name in FIELDS if name != "apiKey"}
    for row in DATA.requests[:60]:
        for name in values:
            values[name] |= {str(value) for value in reference._field(row, name) - {None}}
    values["status"] |= set(STATUSES)
    drawn = {
        name: [*sorted(found), MISSES.get(name, "0xmissing")] for name, found in values.items()
    }
    drawn["apiKey"] = [*KEY_NAMES, "cfk_unknown"]
    return drawn


# A value of the right kind that occurs in no row.
MISSES = {
    "status": "depositing",
    "failReason": "SLIPPAGE",
    "refundFailReason": "REFUND_RECIPIENT_IS_VASP",
    "requestType": "Wrap",
    "currencyInSymbol": "DAI",
    "currencyOutSymbol": "DAI",
    **{name: "999999" for name, kind in FIELDS.items() if kind.value == "int"},
    # Request and order ids are always 0x and 32 bytes: a well-formed one no row has.
    **{name: "0x" + "ee" * 32 for name, kind in FIELDS.items() if kind.value == "id"},
}
VALUES = _values()


@pytest.fixture
async def seeded(engine: AsyncEngine) -> AsyncIterator[Seeded]:
    secrets: dict[str, str] = {}
    async with session_factory(engine)() as session, session.begin():
        for stand_in in KEY_NAMES:
            created = await api_keys.create(session, stand_in, now=datetime.now(UTC))
            secrets[stand_in] = created.secret
    assert sorted(secrets) == list(KEY_NAMES)
    async with engine.begin() as connection:
        await insert_synthetic(connection, DATA)
    key_ids = {secret: index + 1 for index, secret in enumerate(secrets.values())}
    yield Seeded(engine, Reference(DATA.requests, DATA.transactions, key_ids), secrets)


async def _walk(engine: AsyncEngine, params: dict[str, list[str]]) -> tuple[list[str], int | None]:
    sessions = session_factory(engine)
    ids: list[str] = []
    total = None
    continuation: str | None = None
    for _ in range(ROWS + 1):
        query = parse_listing(
            {**params, **({"continuation": [continuation]} if continuation else {})}
        )
        async with sessions() as session:
            rows, continuation = await listing.page(session, query)
            if query.include_total and total is None:
                total = await listing.total(session, query)
        assert len(rows) <= query.limit
        ids.extend(row.id for row in rows)
        if continuation is None:
            return ids, total
    raise AssertionError("paging did not end")


def _group_value(name: str, chosen: list[str]) -> Any:
    if FIELDS[name].value == "int":
        return [int(v) for v in chosen if v.isdigit()] or 1
    return chosen if len(chosen) > 1 else chosen[0]


@st.composite
def filters_param(draw: st.DrawFn, values: dict[str, list[str]]) -> str:
    groups = []
    for _ in range(draw(st.integers(1, 3))):
        group: dict[str, Any] = {}
        names = draw(st.lists(st.sampled_from(sorted(values)), min_size=1, max_size=2, unique=True))
        for name in names:
            key = ("not:" if draw(st.booleans()) else "") + name
            chosen = draw(st.lists(st.sampled_from(values[name]), min_size=1, max_size=3))
            group[key] = _group_value(name, chosen)
        groups.append(group)
    return json.dumps(groups)


def range_bound(name: str) -> st.SearchStrategy[int]:
    if "Block" in name:
        return st.integers(0, 10**7)
    if "fillTime" in name:
        return st.integers(0, 120)
    return st.integers(0, ROWS // 3).map(lambda offset: int(BASE_TIME.timestamp()) + offset)


@st.composite
def listing_params(draw: st.DrawFn, values: dict[str, list[str]]) -> dict[str, list[str]]:
    params: dict[str, list[str]] = {}
    for name in draw(st.lists(st.sampled_from(sorted(values)), max_size=2, unique=True)):
        chosen = draw(st.lists(st.sampled_from(values[name]), min_size=1, max_size=2))
        params[name] = [",".join(chosen)]
    if draw(st.booleans()):
        params["filters"] = [draw(filters_param(values))]
    for name in draw(st.lists(st.sampled_from(RANGE_NAMES), max_size=2, unique=True)):
        params[name] = [str(draw(range_bound(name)))]
    if draw(st.booleans()):
        name = draw(
            st.sampled_from(
                ["amountUsdMin", "amountUsdMax", "appFeesAmountUsdMin", "appFeesAmountUsdMax"]
            )
        )
        params[name] = [draw(st.sampled_from(["0", "0.5", "3", "7.25", "50000", "100000"]))]
    if draw(st.integers(0, 4)) == 0:
        features = draw(st.lists(st.sampled_from(FEATURES), min_size=1, max_size=2, unique=True))
        params["features"] = [",".join(features)]
    params["sortBy"] = [draw(st.sampled_from(["createdAt", "updatedAt", "amountUsd"]))]
    if draw(st.booleans()):
        params["sortDirection"] = [draw(st.sampled_from(["asc", "desc"]))]
    params["limit"] = [str(draw(st.sampled_from([1, 7, 20, 50])))]
    if draw(st.booleans()):
        params["includeTotal"] = ["true"]
    return params


def _secrets(text: str, seeded: Seeded) -> str:
    for stand_in, secret in seeded.secrets.items():
        text = text.replace(stand_in, secret)
    return text


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(drawn=listing_params(VALUES))
async def test_listing_matches_the_reference(seeded: Seeded, drawn: dict[str, list[str]]) -> None:
    params = {name: [_secrets(value, seeded) for value in raw] for name, raw in drawn.items()}
    query: ListingQuery = parse_listing(params)
    expected = seeded.reference.select(query)
    walked, total = await _walk(seeded.engine, params)
    assert walked == expected, params
    if query.include_total:
        assert total == len(expected)


@pytest.mark.parametrize(
    "params",
    [
        {"status": ["success"]},
        {"user": [DATA.requests[0]["user_address"]], "sortBy": ["amountUsd"]},
        {"term": [DATA.transactions[0]["tx_hash"]]},
        {
            "filters": [
                json.dumps([{"status": "failure"}, {"not:chainId": [1, 10], "status": "refund"}])
            ]
        },
        {"currencyInSymbol": ["usdc"], "amountUsdMin": ["50000"], "limit": ["7"]},
        {"apiKey": ["KEY_A"], "sortBy": ["updatedAt"], "sortDirection": ["asc"], "limit": ["50"]},
    ],
)
async def test_typical_queries_find_what_the_reference_finds(
    seeded: Seeded, params: dict[str, list[str]]
) -> None:
    params = {name: [_secrets(value, seeded) for value in raw] for name, raw in params.items()}
    expected = seeded.reference.select(parse_listing(params))
    assert expected  # each of these matches something in the data
    walked, _ = await _walk(seeded.engine, params)
    assert walked == expected


async def test_paging_while_requests_arrive_neither_repeats_nor_skips(seeded: Seeded) -> None:
    """Newest first, a page of 7 at a time; between pages newer requests keep arriving."""
    existing = seeded.reference.select(parse_listing({}))
    arrivals = synthetic_requests(60, seed=99, start=datetime.now(UTC))
    params: dict[str, list[str]] = {"limit": ["7"]}
    sessions = session_factory(seeded.engine)
    walked: list[str] = []
    continuation: str | None = None
    for page_number in range(ROWS):
        if page_number < 20:  # three arrive before each of the first pages
            batch = arrivals.requests[page_number * 3 : page_number * 3 + 3]
            async with seeded.engine.begin() as connection:
                await connection.execute(insert(Request), batch)
        extra = {"continuation": [continuation]} if continuation else {}
        async with sessions() as session:
            rows, continuation = await listing.page(session, parse_listing({**params, **extra}))
        walked.extend(row.id for row in rows)
        if continuation is None:
            break
    assert len(walked) == len(set(walked))  # nothing twice
    from_start = [request_id for request_id in walked if request_id in set(existing)]
    assert from_start == existing  # nothing skipped, in order
