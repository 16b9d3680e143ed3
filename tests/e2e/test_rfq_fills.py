"""Orders external solvers won, filled on the devnet (docs/solvers.md): two reference solvers
(`examples/solver`) and the operator's own price compete; the best bid wins and its solver
fills within its exclusivity through `Filler.fillExclusive`, which the service takes as the
order's fill; a winner that fades is filled by the operator's own solver once its exclusivity
is over (the deadline plus one block), at the quoted output; a solver whose bond cannot hold
the order is not asked; every winner is repaid its deposit once, out of the Depository, and
every unit is accounted for."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import Web3

from crossfill.devnet import accounts
from crossfill.kinds.evm.config import evm_chain
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    OPERATOR_TOKEN,
    ORIGIN,
    balance,
    deposit_native,
    final_status,
    funded_user,
    native_bridge,
    quote_request_id,
    request_quote,
)
from tests.e2e.repaying import depository_payouts, repaying, repayments
from tests.e2e.solvers import blocks_mined, reference_solver
from tests.money_invariant import account_for_money, heads, wait_until_accounted
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for

AMOUNT = 10**17  # 0.1 ETH, about $300 on the devnet
# The quote's life and the exclusivity past it, short so a fade's fallback comes soon.
TTL_SECONDS = 8
EXCLUSIVITY_SECONDS = 4


@pytest.fixture
def filling_service(start_service: StartService, devnet: RunningDevnet) -> ServiceThread:
    """The service (SQLite) with workers, repaying at once, quotes as short as the test asks."""
    deployment = repaying(devnet.deployment)
    deployment = deployment.model_copy(
        update={
            "quotes": deployment.quotes.model_copy(update={"min_ttl_seconds": 2}),
            "rfq": deployment.rfq.model_copy(update={"exclusivity_seconds": EXCLUSIVITY_SECONDS}),
        }
    )
    return start_service(deployment, run_workers=True, settings={"admin_token": OPERATOR_TOKEN})


@pytest.fixture
def destination(devnet: RunningDevnet) -> Iterator[Web3]:
    """The destination, mining a block a second (as a live chain does)."""
    chain = evm_chain(devnet.deployment, DESTINATION)
    assert chain is not None
    with blocks_mined(chain.rpc_url):
        yield Web3(Web3.HTTPProvider(chain.rpc_url))


def _won_quote(service: ServiceThread, winner: str) -> dict[str, Any]:
    """A quote `winner` won (a busy machine may leave one without bids: tried again)."""
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        for _ in range(5):
            body = native_bridge(Account.create().address, amount=str(AMOUNT), ttl=TTL_SECONDS)
            body["recipient"] = Account.create().address
            quote = request_quote(http, body)
            if quote["protocol"].get("solver", {}).get("name") == winner:
                return quote
    raise AssertionError(f"{winner} won no quote")


def _deposited(devnet: RunningDevnet, quote: dict[str, Any]) -> None:
    user: LocalAccount = funded_user(devnet)
    deposit_native(devnet, user, quote, AMOUNT)


def _final(service: ServiceThread, quote: dict[str, Any], timeout: float) -> dict[str, Any]:
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        return final_status(http, quote_request_id(quote), timeout=timeout)


def _recipient(quote: dict[str, Any]) -> str:
    return str(quote["protocol"]["v2"]["orderData"]["output"]["payments"][0]["recipient"])


def _filled_by(destination: Web3, status: dict[str, Any]) -> tuple[str, int]:
    """Who sent the order's one fill, and the block it is in."""
    assert status["status"] == "success", status
    (fill_hash,) = status["txHashes"]
    receipt = destination.eth.get_transaction_receipt(fill_hash)
    assert receipt["status"] == 1
    return destination.eth.get_transaction(fill_hash)["from"], receipt["blockNumber"]


def _first_block_after(destination: Web3, deadline: int, before: int) -> int:
    return next(
        number
        for number in range(before, 0, -1)
        if destination.eth.get_block(number - 1)["timestamp"] <= deadline
    )


def test_winners_fill_a_fade_falls_back_and_every_winner_is_repaid_once(
    filling_service: ServiceThread, devnet: RunningDevnet, destination: Web3
) -> None:
    started = time.monotonic()
    since = heads(devnet.deployment)
    base_url = filling_service.base_url
    with (
        reference_solver(base_url, devnet, "alpha", fee_bps=2) as alpha,
        reference_solver(base_url, devnet, "beta", fee_bps=4),
        # Bidding all the input, but bonded far below the order's $300: never asked.
        reference_solver(base_url, devnet, "thin", fee_bps=0, bond_ether=0.01),
    ):
        won = _won_quote(filling_service, "alpha")
        _deposited(devnet, won)
        with reference_solver(base_url, devnet, "fader", fee_bps=1, fade=True) as fader:
            faded = _won_quote(filling_service, "fader")
            _deposited(devnet, faded)
            won_status = _final(filling_service, won, timeout=30)
            faded_status = _final(filling_service, faded, timeout=40)

    # alpha (2 bps) beat beta (4 bps) and the operator's fees, and filled within its
    # exclusivity with its own transaction, at its bid.
    sender, block = _filled_by(destination, won_status)
    assert sender == alpha.address
    deadline = won["protocol"]["solver"]["exclusivityDeadline"]
    assert destination.eth.get_block(block)["timestamp"] <= deadline
    assert balance(devnet, DESTINATION, NATIVE, _recipient(won)) == AMOUNT * 9_998 // 10_000

    # fader (1 bps) won and never filled: the operator's solver filled at fader's output, in
    # the block after the first past the deadline (or the next, on a busy machine).
    sender, block = _filled_by(destination, faded_status)
    assert sender == accounts.solver().address
    deadline = faded["protocol"]["solver"]["exclusivityDeadline"]
    first_after = _first_block_after(destination, deadline, block)
    assert destination.eth.get_block(first_after)["timestamp"] > deadline
    assert block <= first_after + 2, (block, first_after)
    assert balance(devnet, DESTINATION, NATIVE, _recipient(faded)) == AMOUNT * 9_999 // 10_000

    # Each deposit repaid once, on chain: alpha's to alpha, the fallback's to the operator.
    database = filling_service.settings.database

    def repaid() -> bool:
        rows = [r for r in repayments(database) if r.request_id in {
            quote_request_id(won), quote_request_id(faded)}]  # fmt: skip
        return len(rows) == 2 and all(row.state == "repaid" for row in rows)

    assert wait_for(repaid, timeout=30, interval=0.25)
    payouts = Counter(
        (payout.recipient, payout.currency, payout.amount)
        for payout in depository_payouts(devnet, since=since[ORIGIN])
    )
    assert payouts == {
        (alpha.address.lower(), NATIVE, AMOUNT): 1,
        (accounts.solver().address.lower(), NATIVE, AMOUNT): 1,
    }, payouts
    assert fader.address.lower() not in {recipient for recipient, _c, _a in payouts}

    report = wait_until_accounted(
        lambda: account_for_money(devnet.deployment, database, since=since), timeout=30
    )
    assert report.unaccounted == [] and report.unsettled == [], report.summary()
    assert (report.deposits, report.filled, report.repaid) == (2, 2, 2), report.summary()
    print(f"\nthe whole flow took {time.monotonic() - started:.1f} s")
