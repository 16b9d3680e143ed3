"""kill -9 the service while it repays the solver, restart it, and count on chain: each
deposit is paid to the solver exactly once, for exactly its amount.

The bridges are filled first, their fills far from final. Then the destination is mined until
one batch's fills are final, and the service is killed as it repays them: once as soon as the
batch is recorded (before or as it is signed), once as soon as its transaction is journalled
(around its broadcast); it is started again each time, and resumes."""

from __future__ import annotations

import contextlib
import sqlite3
import tomllib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import tomli_w
from eth_account import Account
from web3 import Web3

from crossfill.devnet import accounts
from crossfill.devnet.anvil import anvil_rpc
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    final_status,
    funded_user,
    native_bridge,
    quote_request_id,
    request_quote,
    rpc_urls,
)
from tests.e2e.repaying import depository_payouts
from tests.money_invariant import account_for_money, heads
from tests.support.service import ServiceProcess, service_settings
from tests.support.waiting import wait_for
from tests.support.wallets.evm import execute_steps

BRIDGES = 4
BATCH = 2
# Deep enough that no fill is final before the kills: the destination is mined past it then.
FINAL_AT = 40
AMOUNT = 10**16


def _deployment(devnet: RunningDevnet, path: Path) -> Path:
    document: dict[str, Any] = tomllib.loads(devnet.deployment_path.read_text())
    document["repayment"] = {"batch_size": BATCH, "max_age_seconds": 0, "min_batch_value_usd": "0"}
    for chain in document["chains"]:
        if chain["id"] == DESTINATION:
            chain["confirmations"] = [{"blocks": FINAL_AT}]
    path.write_text(tomli_w.dumps(document))
    return path


class _Counted:
    """Rows of the service's SQLite database that a query counts."""

    def __init__(self, database: Path, query: str) -> None:
        self.database, self.query = database, query

    def now(self) -> int:
        with contextlib.closing(sqlite3.connect(self.database)) as db:
            (count,) = db.execute(self.query).fetchone()
        return int(count)

    def grows(self) -> Callable[[], bool]:
        before = self.now()
        return lambda: self.now() > before


def _fill_blocks(
    devnet: RunningDevnet, http: httpx.Client, quotes: list[dict[str, Any]]
) -> list[int]:
    """The destination block of each quote's fill, in order."""
    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION]))
    blocks = []
    for quote in quotes:
        status = final_status(http, quote_request_id(quote))
        assert status["status"] == "success"
        (fill,) = status["txHashes"]
        blocks.append(int(web3.eth.get_transaction_receipt(fill)["blockNumber"]))
    return sorted(blocks)


def _final_up_to(devnet: RunningDevnet, block: int) -> None:
    """The destination mined until a fill in `block` is final."""
    rpc_url = rpc_urls(devnet)[DESTINATION]
    head = int(Web3(Web3.HTTPProvider(rpc_url)).eth.block_number)
    anvil_rpc(rpc_url, "anvil_mine", [hex(max(0, block + FINAL_AT - 1 - head))])


def test_kill_9_while_repaying_pays_each_deposit_to_the_solver_once(
    devnet: RunningDevnet, tmp_path: Path
) -> None:
    database = tmp_path / "crossfill.db"
    service = ServiceProcess(service_settings(tmp_path, _deployment(devnet, tmp_path / "d.toml")))
    started = _Counted(database, "SELECT count(*) FROM repayments")
    journalled = _Counted(
        database, "SELECT count(*) FROM sent_transactions WHERE purpose LIKE 'repay:%'"
    )
    repaid = _Counted(database, "SELECT count(*) FROM repayments WHERE state = 'repaid'")
    service.start()
    try:
        since = heads(devnet.deployment)
        user = funded_user(devnet)
        body = native_bridge(user.address, amount=str(AMOUNT))
        with httpx.Client(base_url=service.base_url, timeout=10) as http:
            quotes = [
                request_quote(http, {**body, "recipient": Account.create().address})
                for _ in range(BRIDGES)
            ]
            for quote in quotes:
                execute_steps(quote, user, rpc_urls(devnet))
            fills = _fill_blocks(devnet, http, quotes)
        assert started.now() == 0  # no fill final yet: nothing owed
        # Each batch's fills made final in turn, the service killed as it repays them.
        for batch, trigger in enumerate((started, journalled)):
            grows = trigger.grows()
            _final_up_to(devnet, fills[(batch + 1) * BATCH - 1])
            assert wait_for(grows, timeout=30, interval=0.01)
            service.kill()
            service.start()
        settled = wait_for(lambda: repaid.now() == BRIDGES, timeout=60, interval=0.3)
        assert settled, service.log_tail()
    finally:
        service.stop()

    solver = accounts.solver().address.lower()
    payouts = [p for p in depository_payouts(devnet, since=since[ORIGIN]) if p.recipient == solver]
    assert Counter((p.currency, p.amount) for p in payouts) == {(NATIVE, AMOUNT): BRIDGES}
    assert len({p.payout_id for p in payouts}) == BRIDGES
    report = account_for_money(devnet.deployment, service.database, since=since)
    assert (report.filled, report.repaid, report.unaccounted) == (BRIDGES, BRIDGES, [])
