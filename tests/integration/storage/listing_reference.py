"""An independent reference for GET /requests filtering and ordering, in plain Python.

Works on the synthetic rows as inserted, and knows nothing of the SQL compiler: each field's
meaning is written out again from the spec's parameter table.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from crossfill.domain.enums import FEATURES
from crossfill.domain.listing_query import Condition, ListingQuery, SortBy

Row = dict[str, Any]


class Reference:
    def __init__(
        self, rows: list[Row], transactions: list[Row], key_ids: dict[str, int] | None = None
    ) -> None:
        self.rows = rows
        self.hashes: dict[str, dict[str, set[str]]] = {}
        for tx in transactions:
            by_kind = self.hashes.setdefault(tx["request_id"], {})
            by_kind.setdefault(tx["kind"], set()).add(tx["tx_hash"])
        # API key secret → id, for the `apiKey` filter.
        self.key_ids = key_ids or {}

    def _tx(self, row: Row, *kinds: str) -> set[str]:
        by_kind = self.hashes.get(row["id"], {})
        return set().union(*(by_kind.get(kind, set()) for kind in kinds or by_kind))

    def _field(self, row: Row, name: str) -> set[object]:
        """Every value of the row that the named filter compares against."""
        if name == "term":
            identities: set[object] = {
                row["id"],
                row["user_address"],
                row["recipient"],
                row["deposit_address"],
            }
            return identities | self._tx(row)
        simple: dict[str, Callable[[Row], object]] = {
            "id": lambda r: r["id"],
            "orderId": lambda r: r["order_id"],
            "user": lambda r: r["user_address"],
            "recipient": lambda r: r["recipient"],
            "depositAddress": lambda r: r["deposit_address"],
            "originChainId": lambda r: r["origin_chain_id"],
            "currencyInChainId": lambda r: r["origin_chain_id"],
            "destinationChainId": lambda r: r["destination_chain_id"],
            "currencyOutChainId": lambda r: r["destination_chain_id"],
            "currencyInAddress": lambda r: r["origin_currency"],
            "currencyOutAddress": lambda r: r["destination_currency"],
            "currencyInSymbol": lambda r: r["currency_in_symbol"].upper(),
            "currencyOutSymbol": lambda r: r["currency_out_symbol"].upper(),
            "status": lambda r: r["status"],
            "failReason": lambda r: r["fail_reason"],
            "refundFailReason": lambda r: r["refund_fail_reason"],
            "requestType": lambda r: r["request_type"],
            "referrer": lambda r: r["referrer"],
        }
        if name in simple:
            return {simple[name](row)}
        if name == "chainId":
            return {row["origin_chain_id"], row["destination_chain_id"]}
        if name in ("depositTxHash", "fillTxHash", "refundTxHash"):
            return set(self._tx(row, name.removesuffix("TxHash")))
        if name == "hash":
            return set(self._tx(row, "deposit", "fill"))
        if name == "apiKey":
            return {row["api_key_id"]}
        raise AssertionError(name)

    def _matches(self, row: Row, condition: Condition) -> bool:
        wanted: set[object] = set(condition.values)
        if condition.field == "apiKey":  # the key's secret stands for the key's id
            wanted = set[object]({self.key_ids.get(str(v)) for v in condition.values}) - {None}
        hit = bool((self._field(row, condition.field) - {None}) & wanted)
        return hit != condition.negated

    def _in_ranges(self, row: Row, ranges: dict[str, int]) -> bool:
        created = int(row["created_at"].timestamp())
        checks: dict[str, Callable[[int], bool]] = {
            "startTimestamp": lambda b: created >= b,
            "endTimestamp": lambda b: created <= b,
            "startBlock": lambda b: _ge(row["origin_block_number"], b),
            "endBlock": lambda b: _le(row["origin_block_number"], b),
            "amountUsdMin": lambda b: row["amount_in_usd_micros"] >= b,
            "amountUsdMax": lambda b: row["amount_in_usd_micros"] <= b,
            "appFeesAmountUsdMin": lambda b: row["app_fees_usd_micros"] >= b,
            "appFeesAmountUsdMax": lambda b: row["app_fees_usd_micros"] <= b,
            "fillTimeMin": lambda b: _ge(row["fill_time_seconds"], b),
            "fillTimeMax": lambda b: _le(row["fill_time_seconds"], b),
        }
        return all(checks[name](bound) for name, bound in ranges.items())

    def select(self, query: ListingQuery) -> list[str]:
        """The ids of every matching row, in listing order (all pages together)."""

        def keep(row: Row) -> bool:
            if not all(self._matches(row, c) for c in query.conditions):
                return False
            if query.groups and not any(
                all(self._matches(row, c) for c in group) for group in query.groups
            ):
                return False
            features = {
                FEATURES[bit] for bit in range(len(FEATURES)) if row["features_mask"] >> bit & 1
            }
            return set(query.features) <= features and self._in_ranges(row, dict(query.ranges))

        column = {
            SortBy.CREATED_AT: "created_at",
            SortBy.UPDATED_AT: "updated_at",
            SortBy.AMOUNT_USD: "amount_in_usd_micros",
        }[query.sort_by]
        matching = sorted(
            (row for row in self.rows if keep(row)),
            key=lambda row: (_sortable(row[column]), row["id"]),
            reverse=query.direction == "desc",
        )
        return [row["id"] for row in matching]


def _ge(value: int | None, bound: int) -> bool:
    return value is not None and value >= bound


def _le(value: int | None, bound: int) -> bool:
    return value is not None and value <= bound


def _sortable(value: object) -> object:
    return value.astimezone(UTC) if isinstance(value, datetime) else value
