"""The filters of the v3 listing (`GET /requests/v3`) as its query string."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import JsonValue

from crossfill_client.models._base import WireRequest
from crossfill_client.models.status import RequestStatus

FilterGroup = dict[str, JsonValue]


class RequestFilters(WireRequest):
    """Every filter combines with AND. `filters` are groups OR-ed together (fields in a group
    AND-ed; a key may be negated with `not:`); `features` must all be present. `limit` is the
    page size (1 to 50)."""

    term: str | None = None
    id: str | None = None
    order_id: str | None = None
    deposit_tx_hash: str | None = None
    fill_tx_hash: str | None = None
    refund_tx_hash: str | None = None
    origin_chain_id: int | None = None
    destination_chain_id: int | None = None
    chain_id: int | None = None
    user: str | None = None
    deposit_address: str | None = None
    recipient: str | None = None
    status: RequestStatus | None = None
    fail_reason: str | None = None
    refund_fail_reason: str | None = None
    api_key: str | None = None
    request_type: str | None = None
    currency_in_chain_id: int | None = None
    currency_out_chain_id: int | None = None
    currency_in_address: str | None = None
    currency_out_address: str | None = None
    currency_in_symbol: str | None = None
    currency_out_symbol: str | None = None
    start_timestamp: int | None = None
    end_timestamp: int | None = None
    start_block: int | None = None
    end_block: int | None = None
    amount_usd_min: str | None = None
    amount_usd_max: str | None = None
    fill_time_min: int | None = None
    fill_time_max: int | None = None
    features: list[str] | None = None
    filters: list[FilterGroup] | None = None
    include_child_requests: bool | None = None
    include_authenticated_data: bool | None = None
    include_total: bool | None = None
    sort_by: Literal["createdAt", "updatedAt", "amountUsd"] | None = None
    sort_direction: Literal["asc", "desc"] | None = None
    limit: int | None = None

    def query(self, continuation: str | None = None) -> dict[str, str]:
        """The query parameters of one page: lists comma-separated, `filters` as JSON,
        booleans `true`/`false`."""
        params: dict[str, str] = {}
        for name, value in self.wire().items():
            if name == "filters":
                params[name] = json.dumps(value, separators=(",", ":"))
            elif isinstance(value, list):
                params[name] = ",".join(str(part) for part in value)
            elif isinstance(value, bool):
                params[name] = "true" if value else "false"
            else:
                params[name] = str(value)
        if continuation is not None:
            params["continuation"] = continuation
        return params
