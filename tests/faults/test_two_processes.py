"""Two `crossfill run` on one PostgreSQL (an operator's mistake, or a frozen VM resumed after
its replacement started): one signs, the other waits; every bridge fills once."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from eth_account import Account
from sqlalchemy import select

from crossfill.store.tables import SentTransaction
from tests.e2e.bridging import (
    final_status,
    funded_user,
    native_bridge,
    request_quote,
    rpc_urls,
    stored_rows,
)
from tests.support.service import ServiceThread, StartService
from tests.support.wallets.evm import execute_steps

BRIDGES = 8


def _bridge(devnet: Any, service: ServiceThread) -> dict[str, Any]:
    user = funded_user(devnet)
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        body = native_bridge(user.address, recipient=Account.create().address)
        quote = request_quote(http, body)
        execute_steps(quote, user, rpc_urls(devnet))
        return final_status(http, quote["steps"][0]["requestId"], timeout=60)


def test_two_processes_on_one_database_fill_each_bridge_once(
    start_service: StartService, devnet, postgres_url: str
) -> None:
    first = start_service(run_workers=True, settings={"database_url": postgres_url})
    second = start_service(run_workers=True, settings={"database_url": postgres_url})
    services = [first, second] * (BRIDGES // 2)
    with ThreadPoolExecutor(BRIDGES) as pool:
        statuses = list(pool.map(lambda service: _bridge(devnet, service), services))
    assert [status["status"] for status in statuses] == ["success"] * BRIDGES
    journal = stored_rows(first, select(SentTransaction))
    fills = Counter(row.request_id for row in journal if row.purpose == "fill")
    assert len(fills) == BRIDGES
    live = Counter((row.chain_id, row.nonce) for row in journal if row.status != "replaced")
    assert all(count == 1 for count in live.values()), live
