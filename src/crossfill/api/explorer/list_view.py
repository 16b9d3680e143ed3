"""The explorer's list: its form (one search box and the v3 listing's filters) read into the
listing's own parameters, and each listed request summarised for a table row."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from urllib.parse import urlencode

from crossfill.api.explorer.links import Chains
from crossfill.domain.identifiers import InvalidIdentifier, parse_chain_id
from crossfill.domain.listing_query import ListingError
from crossfill.domain.money import format_units
from crossfill.domain.status import RequestStatus
from crossfill.store.db import as_utc
from crossfill.store.tables import Request

PAGE_SIZE = "20"
MAX_SYMBOL = 32  # as the deployment file allows a currency's


def _unix_seconds(name: str, text: str) -> str:
    """A `datetime-local` value ("2026-11-22T12:00", UTC) as Unix seconds."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ListingError(f"{name} must be a date and time (UTC), as 2026-11-22T12:00") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return str(int(moment.timestamp()))


def _chain_id(label: str, text: str) -> int:
    try:
        return parse_chain_id(text, label)
    except InvalidIdentifier as exc:
        raise ListingError(str(exc)) from None


@dataclass(frozen=True)
class ListForm:
    """The list page's form as submitted (each field as typed; empty: not filtered on)."""

    q: str = ""
    status: str = ""
    origin: str = ""
    destination: str = ""
    currency: str = ""
    start: str = ""
    end: str = ""

    @classmethod
    def of(cls, params: Mapping[str, str]) -> ListForm:
        return cls(**{field.name: params.get(field.name, "").strip() for field in fields(cls)})

    def listing_params(self) -> dict[str, list[str]]:
        """The filters as the v3 listing's parameters (the search term is the caller's)."""
        params: dict[str, list[str]] = {"limit": [PAGE_SIZE]}
        if self.status:
            if self.status not in {status.value for status in RequestStatus}:
                raise ListingError(f"Status {self.status[:40]!r} is not a request status")
            params["status"] = [self.status]
        for name, label, chain in (
            ("originChainId", "Origin chain", self.origin),
            ("destinationChainId", "Destination chain", self.destination),
        ):
            if chain:
                params[name] = [str(_chain_id(label, chain))]
        if self.currency:
            if len(self.currency) > MAX_SYMBOL or not self.currency.isprintable():
                raise ListingError(f"Currency must be a symbol of at most {MAX_SYMBOL} characters")
            # In either currency: two groups, OR-ed.
            groups = [{"currencyInSymbol": self.currency}, {"currencyOutSymbol": self.currency}]
            params["filters"] = [json.dumps(groups, separators=(",", ":"))]
        if self.start:
            params["startTimestamp"] = [_unix_seconds("From", self.start)]
        if self.end:
            params["endTimestamp"] = [_unix_seconds("To", self.end)]
        return params

    def page_url(self, prefix: str, continuation: str | None = None) -> str:
        """This list's page after `continuation` (None: its first)."""
        kept = {field.name: getattr(self, field.name) for field in fields(self)}
        query = {name: value for name, value in kept.items() if value}
        if continuation is not None:
            query["continuation"] = continuation
        return f"{prefix}?{urlencode(query)}" if query else prefix


@dataclass(frozen=True)
class Amount:
    amount: str  # formatted
    symbol: str

    def __str__(self) -> str:
        return f"{self.amount} {self.symbol}".strip()


def _amount(row: Request, side: str, raw: str, symbol: str) -> Amount:
    """`raw` units of the quoted currency on `side` (currencyIn, currencyOut), formatted with
    the decimals the quote gave it."""
    quoted = row.quote.get("details", {}).get(side, {}).get("currency", {})
    decimals = quoted.get("decimals")
    if not isinstance(decimals, int):
        return Amount(raw, symbol)
    return Amount(format_units(int(raw), decimals), symbol)


@dataclass(frozen=True)
class RowSummary:
    """One listed request as a table row shows it."""

    request_id: str
    status: str
    origin: str
    destination: str
    amount_in: Amount
    amount_out: Amount
    user: str
    created_at: datetime


def summaries(rows: Sequence[Request], chains: Chains) -> list[RowSummary]:
    return [
        RowSummary(
            request_id=row.id,
            status=row.status,
            origin=chains.name(row.origin_chain_id),
            destination=chains.name(row.destination_chain_id),
            amount_in=_amount(row, "currencyIn", row.amount_in, row.currency_in_symbol),
            amount_out=_amount(row, "currencyOut", row.amount_out, row.currency_out_symbol),
            user=row.user_address,
            created_at=as_utc(row.created_at),
        )
        for row in rows
    ]
