"""`GET /requests` query parameters → a validated `ListingQuery` (pure; no database).

Field parameters (ids, addresses, chains, currencies, statuses) may repeat or hold
comma-separated values: any of them matches. `filters` is a JSON array of groups; fields in a
group are AND-ed, groups are OR-ed, a `not:` prefix negates a field, and a field's value may
be an array. Range parameters and `features` are top-level only. Every mistake is a
`ListingError` naming the parameter (answered as 400).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from enum import StrEnum

from crossfill.domain.enums import FAIL_REASONS, FEATURES, REFUND_FAIL_REASONS, REQUEST_TYPES
from crossfill.domain.identifiers import (
    INT64_MAX,
    InvalidIdentifier,
    is_decimal,
    is_hash32,
    parse_text,
    parse_uint,
    parse_unix_seconds,
)
from crossfill.domain.status import RequestStatus

DEFAULT_LIMIT, MAX_LIMIT = 20, 50
MAX_GROUPS, MAX_VALUES = 20, 100
# A `filters` document: 20 groups of a few fields of up to 100 values fits well within this;
# the cap bounds the parser's work before anything else is checked.
MAX_FILTERS_LENGTH = 16_384
_HEX = re.compile(r"0x[0-9a-fA-F]*", re.ASCII)


class ListingError(ValueError):
    """A query parameter is malformed; the message says which and why."""


class Kind(StrEnum):
    HEX = "hex"  # hashes, addresses: 0x-hex compared lower-case, other strings as given
    ID = "id"  # request and order ids: always 0x and 32 bytes (compared lower-case)
    INT = "int"
    STATUS = "status"
    FAIL_REASON = "failReason"
    REFUND_FAIL_REASON = "refundFailReason"
    REQUEST_TYPE = "requestType"
    SYMBOL = "symbol"  # compared case-insensitively
    TEXT = "text"


# Fields that may appear as parameters and inside `filters` groups.
FIELDS: dict[str, Kind] = {
    "term": Kind.HEX,
    "id": Kind.ID,
    "orderId": Kind.ID,
    "depositTxHash": Kind.HEX,
    "fillTxHash": Kind.HEX,
    "refundTxHash": Kind.HEX,
    "user": Kind.HEX,
    "recipient": Kind.HEX,
    "depositAddress": Kind.HEX,
    "originChainId": Kind.INT,
    "destinationChainId": Kind.INT,
    "chainId": Kind.INT,
    "currencyInChainId": Kind.INT,
    "currencyOutChainId": Kind.INT,
    "currencyInAddress": Kind.HEX,
    "currencyOutAddress": Kind.HEX,
    "currencyInSymbol": Kind.SYMBOL,
    "currencyOutSymbol": Kind.SYMBOL,
    "status": Kind.STATUS,
    "failReason": Kind.FAIL_REASON,
    "refundFailReason": Kind.REFUND_FAIL_REASON,
    "apiKey": Kind.TEXT,
    "requestType": Kind.REQUEST_TYPE,
}
# v2 only: `hash` (deposit or fill transaction) and the `referrer` filter.
V2_FIELDS: dict[str, Kind] = {"hash": Kind.HEX, "referrer": Kind.TEXT}
V3_FIELD_NAMES = frozenset(FIELDS)
V2_FIELD_NAMES = frozenset(
    {
        "user",
        "hash",
        "originChainId",
        "destinationChainId",
        "chainId",
        "id",
        "orderId",
        "referrer",
        "depositAddress",
        "status",
        "apiKey",
    }
)
INT_RANGES = (
    "startTimestamp",
    "endTimestamp",
    "startBlock",
    "endBlock",
    "fillTimeMin",
    "fillTimeMax",
)
USD_RANGES = ("amountUsdMin", "amountUsdMax", "appFeesAmountUsdMin", "appFeesAmountUsdMax")
V2_RANGES = ("startTimestamp", "endTimestamp", "startBlock", "endBlock")


class SortBy(StrEnum):
    CREATED_AT = "createdAt"
    UPDATED_AT = "updatedAt"
    AMOUNT_USD = "amountUsd"


DEFAULT_DIRECTION = {SortBy.CREATED_AT: "desc", SortBy.UPDATED_AT: "desc", SortBy.AMOUNT_USD: "asc"}


@dataclass(frozen=True)
class Condition:
    field: str
    values: tuple[str | int, ...]
    negated: bool = False


@dataclass(frozen=True)
class Cursor:
    """Where the previous page ended: its last record's sort value and id."""

    sort_by: SortBy
    direction: str
    value: str | int
    request_id: str

    def encode(self) -> str:
        raw = json.dumps(
            [self.sort_by.value, self.direction, self.value, self.request_id],
            separators=(",", ":"),
        ).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, token: str) -> Cursor:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            sort_by, direction, value, request_id = json.loads(raw)
            cursor = cls(SortBy(sort_by), direction, value, request_id)
        except (binascii.Error, ValueError, TypeError) as exc:
            raise ListingError("continuation is not a cursor this service issued") from exc
        if not _cursor_fields_valid(cursor):
            raise ListingError("continuation is not a cursor this service issued")
        return cursor


def _cursor_fields_valid(cursor: Cursor) -> bool:
    """Only what `encode` writes: a request id, and a sort value the database can compare
    (an amount in BIGINT range, or an ISO timestamp)."""
    value = cursor.value
    if isinstance(value, bool) or not is_hash32(cursor.request_id):
        return False
    if cursor.direction not in ("asc", "desc"):
        return False
    if isinstance(value, int):
        return cursor.sort_by is SortBy.AMOUNT_USD and 0 <= value <= INT64_MAX
    return isinstance(value, str) and len(value) <= 40 and value.isprintable()


@dataclass(frozen=True)
class ListingQuery:
    conditions: tuple[Condition, ...] = ()  # AND-ed
    groups: tuple[tuple[Condition, ...], ...] = ()  # OR-ed groups of AND-ed conditions
    ranges: Mapping[str, int] = field(default_factory=dict)  # range name → integer bound
    features: tuple[str, ...] = ()  # every one of them
    sort_by: SortBy = SortBy.CREATED_AT
    direction: str = "desc"
    limit: int = DEFAULT_LIMIT
    cursor: Cursor | None = None
    include_total: bool = False
    include_authenticated_data: bool = False
    include_child_requests: bool = False
    include_order_data: bool = False


def _value(name: str, kind: Kind, raw: object) -> str | int:
    try:
        if kind is Kind.INT:
            if not isinstance(raw, str | int):
                raise InvalidIdentifier(f"{name} must be a non-negative integer")
            return parse_uint(raw, name)
        if not isinstance(raw, str) or not raw:
            raise InvalidIdentifier(f"{name} must be a non-empty string")
        parse_text(raw, name)
    except InvalidIdentifier as exc:
        raise ListingError(str(exc)) from None
    if kind is Kind.ID:
        if not is_hash32(raw):
            raise ListingError(f"{name} {raw[:80]!r} is not a 0x-prefixed 32-byte id")
        return raw.lower()
    if kind is Kind.HEX:
        return raw.lower() if _HEX.fullmatch(raw) else raw
    if kind is Kind.SYMBOL:
        return raw.upper()
    allowed: Collection[str] | None = {
        Kind.STATUS: [status.value for status in RequestStatus],
        Kind.FAIL_REASON: FAIL_REASONS,
        Kind.REFUND_FAIL_REASON: REFUND_FAIL_REASONS,
        Kind.REQUEST_TYPE: REQUEST_TYPES,
    }.get(kind)
    if allowed is not None and raw not in allowed:
        raise ListingError(f"{name} {raw!r} is not one of the spec's values")
    return raw


def _condition(name: str, raw_values: Sequence[object], fields: Mapping[str, Kind]) -> Condition:
    negated = name.startswith("not:")
    field_name = name.removeprefix("not:")
    kind = fields.get(field_name)
    if kind is None:
        raise ListingError(f"{field_name!r} cannot be filtered on in a filters group")
    if not raw_values or len(raw_values) > MAX_VALUES:
        raise ListingError(f"{field_name} needs 1..{MAX_VALUES} values")
    values = tuple(dict.fromkeys(_value(field_name, kind, raw) for raw in raw_values))
    return Condition(field_name, values, negated)


def _groups(raw: str, fields: Mapping[str, Kind]) -> tuple[tuple[Condition, ...], ...]:
    if len(raw) > MAX_FILTERS_LENGTH:
        raise ListingError(f"filters may be at most {MAX_FILTERS_LENGTH} characters")
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise ListingError(f"filters is not valid JSON: {exc}") from exc
    except RecursionError:
        raise ListingError("filters is nested too deeply") from None
    if not isinstance(document, list) or not 1 <= len(document) <= MAX_GROUPS:
        raise ListingError(f"filters must be a JSON array of 1..{MAX_GROUPS} objects")
    groups = []
    for position, group in enumerate(document):
        if not isinstance(group, dict) or not group:
            raise ListingError(f"filters[{position}] must be a non-empty object")
        conditions = []
        for key, value in group.items():
            if key.removeprefix("not:") in (*INT_RANGES, *USD_RANGES, "features"):
                raise ListingError(f"filters[{position}]: {key} is allowed at the top level only")
            values = value if isinstance(value, list) else [value]
            conditions.append(_condition(key, values, fields))
        groups.append(tuple(conditions))
    return tuple(groups)


def _flag(name: str, raw: str | None) -> bool:
    if raw is None:
        return False
    if raw.lower() in ("true", "1"):
        return True
    if raw.lower() in ("false", "0"):
        return False
    raise ListingError(f"{name} must be true or false")


def _usd_micros(name: str, raw: str) -> int:
    try:
        amount = Decimal(raw)
    except InvalidOperation as exc:
        raise ListingError(f"{name} must be a decimal USD amount") from exc
    if not amount.is_finite() or amount < 0 or amount > 10**12:
        raise ListingError(f"{name} must be a decimal USD amount from 0 to 10^12")
    return int(amount * 1_000_000)


def _limit(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_LIMIT
    if not is_decimal(raw) or len(raw) > 2 or not 1 <= int(raw) <= MAX_LIMIT:
        raise ListingError(f"limit must be an integer from 1 to {MAX_LIMIT}")
    return int(raw)


def _sort(sort_raw: str | None, direction_raw: str | None, v2: bool) -> tuple[SortBy, str]:
    allowed = (SortBy.CREATED_AT, SortBy.UPDATED_AT) if v2 else tuple(SortBy)
    try:
        sort_by = SortBy(sort_raw or SortBy.CREATED_AT)
    except ValueError:
        sort_by = None
    if sort_by not in allowed:
        raise ListingError(f"sortBy must be one of {', '.join(s.value for s in allowed)}")
    direction = direction_raw or DEFAULT_DIRECTION[sort_by]
    if direction not in ("asc", "desc"):
        raise ListingError("sortDirection must be asc or desc")
    return sort_by, direction


def _ranges(one: Callable[[str], str | None], v2: bool) -> dict[str, int]:
    ranges: dict[str, int] = {}
    for name in V2_RANGES if v2 else INT_RANGES:
        raw = one(name)
        if raw is None:
            continue
        try:
            timestamp = name in ("startTimestamp", "endTimestamp")
            ranges[name] = parse_unix_seconds(raw, name) if timestamp else parse_uint(raw, name)
        except InvalidIdentifier as exc:
            raise ListingError(str(exc)) from None
    for name in () if v2 else USD_RANGES:
        raw = one(name)
        if raw is not None:
            ranges[name] = _usd_micros(name, raw)
    return ranges


def _features(raw: str | None) -> tuple[str, ...]:
    if raw is None:
        return ()
    features = tuple(dict.fromkeys(f for f in raw.split(",") if f))
    if not features or any(f not in FEATURES for f in features):
        raise ListingError(f"features must be among {', '.join(FEATURES)}")
    return features


def parse_listing(params: Mapping[str, Sequence[str]], *, v2: bool = False) -> ListingQuery:
    """Unknown parameters are ignored, as on every GET endpoint."""

    def one(name: str) -> str | None:
        values = params.get(name)
        return values[-1] if values else None

    fields = {**FIELDS, **V2_FIELDS} if v2 else FIELDS
    names = V2_FIELD_NAMES if v2 else V3_FIELD_NAMES
    conditions = []
    for name in sorted(names & set(params)):
        values = [part for raw in params[name] for part in raw.split(",") if part]
        conditions.append(_condition(name, values, fields))
    ranges = _ranges(one, v2)
    features = () if v2 else _features(one("features"))
    raw_filters = one("filters")
    sort_by, direction = _sort(one("sortBy"), one("sortDirection"), v2)
    cursor = None
    raw_cursor = one("continuation")
    if raw_cursor:
        cursor = Cursor.decode(raw_cursor)
        if (cursor.sort_by, cursor.direction) != (sort_by, direction):
            raise ListingError("continuation belongs to a different sortBy/sortDirection")
    return ListingQuery(
        conditions=tuple(conditions),
        groups=_groups(raw_filters, fields) if raw_filters and not v2 else (),
        ranges=ranges,
        features=features,
        sort_by=sort_by,
        direction=direction,
        limit=_limit(one("limit")),
        cursor=cursor,
        include_total=_flag("includeTotal", one("includeTotal")),
        include_authenticated_data=_flag(
            "includeAuthenticatedData", one("includeAuthenticatedData")
        ),
        include_child_requests=_flag("includeChildRequests", one("includeChildRequests")),
        include_order_data=_flag("includeOrderData", one("includeOrderData")),
    )
