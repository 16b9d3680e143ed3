"""Synthetic requests for listing tests and benchmarks: realistic spreads, inserted in bulk.

Rows are plain dicts for Core inserts into `requests` and `request_transactions` (no ORM unit
of work, so a million rows load in minutes). The mix: a few hundred wallets, four chains, ETH
and USDC, every status with matching transactions and fail reasons, creation times with ties.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncConnection

from crossfill.domain.enums import REQUEST_TYPES
from crossfill.store.tables import Request, RequestTransaction

NATIVE = "0x0000000000000000000000000000000000000000"
CHAINS = (1, 10, 8453, 42161)
STATUSES = ("waiting", "depositing", "pending", "submitted", "success", "failure", "refund")
FAIL_REASONS = ("SOLVER_BALANCE_TOO_LOW", "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL", "ORDER_EXPIRED")
REFERRERS = (None, "wallet-a", "dapp-b")
BASE_TIME = datetime(2026, 10, 1, tzinfo=UTC)


def _hex(rng: random.Random, size: int) -> str:
    return "0x" + rng.randbytes(size).hex()


def usdc_of(chain_id: int) -> str:
    return "0x" + f"{chain_id:x}".rjust(40, "a")


@dataclass
class SyntheticSet:
    requests: list[dict[str, Any]] = field(default_factory=list)
    transactions: list[dict[str, Any]] = field(default_factory=list)


def _transactions(rng: random.Random, row: dict[str, Any]) -> list[dict[str, Any]]:
    status = row["status"]
    kinds = []
    if status not in ("waiting",):
        kinds.append(("deposit", row["origin_chain_id"]))
    if status in ("submitted", "success", "failure"):
        kinds.append(("fill", row["destination_chain_id"]))
    if status == "refund":
        kinds.append(("refund", row["origin_chain_id"]))
    settled = status in ("success", "failure", "refund")
    return [
        {
            "request_id": row["id"],
            "kind": kind,
            "chain_id": chain_id,
            "tx_hash": _hex(rng, 32),
            "block_number": rng.randrange(1, 10**7) if settled or kind == "deposit" else None,
            "fee": str(rng.randrange(10**12, 10**15)),
            "timestamp": int(row["created_at"].timestamp()) + rng.randrange(1, 60),
            "status": "failure" if status == "failure" and kind == "fill" else "success",
            "created_at": row["created_at"],
        }
        for kind, chain_id in kinds
    ]


def synthetic_requests(
    count: int,
    *,
    seed: int = 7,
    wallets: int = 300,
    api_key_ids: tuple[int | None, ...] = (None,),
    start: datetime = BASE_TIME,
    quote: dict[str, Any] | None = None,
) -> SyntheticSet:
    rng = random.Random(seed)
    pool = [_hex(rng, 20) for _ in range(wallets)]
    result = SyntheticSet()
    for index in range(count):
        origin, destination = rng.sample(CHAINS, 2)
        native = rng.random() < 0.5
        user = rng.choice(pool)
        status = rng.choice(STATUSES)
        created = start + timedelta(seconds=index // 3)  # ties on purpose
        amount_usd = rng.randrange(1, 10**11)
        row = {
            "id": _hex(rng, 32),
            "order_id": _hex(rng, 32),
            "status": status,
            "origin_chain_id": origin,
            "destination_chain_id": destination,
            "user_address": user,
            "recipient": user if rng.random() < 0.7 else rng.choice(pool),
            "refund_to": user,
            "origin_currency": NATIVE if native else usdc_of(origin),
            "destination_currency": NATIVE if native else usdc_of(destination),
            "trade_type": "EXACT_INPUT",
            "amount_in": str(amount_usd * 10**6),
            "amount_out": str(amount_usd * 10**6 - 1000),
            "minimum_amount_out": str(amount_usd * 10**6 - 1000),
            "amount_in_usd_micros": amount_usd,
            "explicit_deposit": True,
            "quote": quote or {},
            "referrer": rng.choice(REFERRERS),
            "api_key_id": rng.choice(api_key_ids),
            "fail_reason": rng.choice(FAIL_REASONS) if status in ("failure", "refund") else None,
            "refund_fail_reason": (
                "AMOUNT_TOO_LOW_TO_REFUND" if status == "failure" and rng.random() < 0.3 else None
            ),
            "expires_at": created + timedelta(minutes=5),
            "created_at": created,
            "updated_at": created + timedelta(seconds=rng.randrange(0, 3600)),
            "request_type": rng.choice(REQUEST_TYPES[:2]) if rng.random() < 0.9 else "Call",
            "currency_in_symbol": "ETH" if native else "USDC",
            "currency_out_symbol": "ETH" if native else "USDC",
            "features_mask": rng.randrange(0, 32) if rng.random() < 0.3 else 0,
            "app_fees_usd_micros": rng.randrange(0, 10**7) if rng.random() < 0.3 else 0,
            "deposit_address": _hex(rng, 20) if rng.random() < 0.05 else None,
            "origin_block_number": rng.randrange(1, 10**7) if status != "waiting" else None,
            "fill_time_seconds": rng.randrange(1, 120) if status == "success" else None,
        }
        result.requests.append(row)
        result.transactions.extend(_transactions(rng, row))
    return result


async def insert_synthetic(
    connection: AsyncConnection, data: SyntheticSet, chunk: int = 5000
) -> None:
    for offset in range(0, len(data.requests), chunk):
        await connection.execute(insert(Request), data.requests[offset : offset + chunk])
    for offset in range(0, len(data.transactions), chunk):
        await connection.execute(
            insert(RequestTransaction), data.transactions[offset : offset + chunk]
        )
