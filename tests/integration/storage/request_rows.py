"""A minimal `requests` row as the group commit stores it, for the storage tests."""

from __future__ import annotations

from datetime import datetime
from typing import Any

ADDRESS = "0x" + "11" * 20


def request_row(index: int, now: datetime) -> dict[str, Any]:
    """A waiting request from chain 1 to chain 2; `index` makes its id and order id."""
    return {
        "id": f"0x{index:064x}",
        "order_id": f"0x{index + 10**6:064x}",
        "status": "waiting",
        "origin_chain_id": 1,
        "destination_chain_id": 2,
        "user_address": ADDRESS,
        "recipient": ADDRESS,
        "refund_to": ADDRESS,
        "origin_currency": ADDRESS,
        "destination_currency": ADDRESS,
        "trade_type": "EXACT_INPUT",
        "amount_in": "100",
        "amount_out": "99",
        "minimum_amount_out": "98",
        "amount_in_usd_micros": 100,
        "explicit_deposit": True,
        "quote": {"steps": []},
        "expires_at": now,
        "created_at": now,
        "updated_at": now,
    }
