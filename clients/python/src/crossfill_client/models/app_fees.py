"""A wallet's owed app fees (`GET /app-fees/{wallet}/balances`)."""

from __future__ import annotations

from decimal import Decimal

from crossfill_client.models._base import WireModel
from crossfill_client.models.common import Amount


class AppFeeBalances(WireModel):
    """Owed app fees per chain and currency; the totals are USD."""

    balances: tuple[Amount, ...]
    total_balance_usd: Decimal | None = None
    outstanding_fast_fill_balance_usd: Decimal | None = None
    available_balance_usd: Decimal | None = None
