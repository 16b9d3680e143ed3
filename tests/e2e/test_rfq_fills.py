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
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import select
from web3 import Web3

from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at
from crossfill.kinds.evm.config import evm_chain
from crossfill.store.tables import Request
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    OPERATOR,
    OPERATOR_TOKEN,
    ORIGIN,
    balance,
    deposit_native,
    final_status,
    funded_user,
    native_bridge,
    quote_request_id,
    request_quote,
    rpc_urls,
    stored_rows,
)
from tests.e2e.repaying import depository_payouts, repaying, repayments
from tests.e2e.solvers import reference_solver, solver_bond
from tests.money_invariant import account_for_money, heads, wait_until_accounted
from tests.support.block_mining import blocks_mined
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for

AMOUNT = 10**17  # 0.1 ETH, about $300 on the devnet
# The quote's life and the exclusivity past it, short so a fade's fallback comes soon.
TTL_SECONDS = 8
EXCLUSIVITY_SECONDS = 4
# A first fade's cooldown.
COOLDOWN = 120


@pytest.fixture
def filling_service(start_service: StartService, devnet: RunningDevnet) -> ServiceThread:
    """The service (SQLite) with workers, repaying at once, quotes as short as the test asks."""
    deployment = repaying(devnet.deployment)
    deployment = deployment.model_copy(
        update={
            "quotes": deployment.quotes.model_copy(update={"min_ttl_seconds": 2}),
            "rfq": deployment.rfq.model_copy(
                update={
                    "exclusivity_seconds": EXCLUSIVITY_SECONDS,
                    "fade_cooldown_seconds": COOLDOWN,
                }
            ),
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


def _fallen_back(
    service: ServiceThread, destination: Web3, quote: dict[str, Any], timeout: float
) -> dict[str, Any]:
    """The faded order's final status; if it never comes, what the fallback was waiting on
    (the destination's head against the exclusivity deadline, the request's lease)."""
    try:
        return _final(service, quote, timeout)
    except AssertionError as unfinished:
        head = destination.eth.get_block("latest")
        (row,) = stored_rows(service, select(Request).where(Request.id == quote_request_id(quote)))
        deadline = quote["protocol"]["solver"]["exclusivityDeadline"]
        raise AssertionError(
            f"no fallback: {unfinished}; destination head {head['number']} at "
            f"{head['timestamp']} (wall {time.time():.0f}), exclusivity until {deadline}; "
            f"request {row.status} leased by {row.lease_owner} until {row.lease_expires_at}"
        ) from unfinished


def _bond(devnet: RunningDevnet, solver: str) -> int:
    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION]))
    bond = contract_at(web3, "SolverBond", solver_bond(devnet))
    return int(bond.functions.bondOf(solver, NATIVE).call())


def _debits(devnet: RunningDevnet) -> list[tuple[str, int, bytes]]:
    """Every debit the destination's SolverBond logged: whose, how much, for which order."""
    web3 = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION]))
    bond = contract_at(web3, "SolverBond", solver_bond(devnet))
    return [
        (event.args["solver"], int(event.args["amount"]), bytes(event.args["orderId"]))
        for event in bond.events.Debited().get_logs(from_block=0)
    ]


def _fade_settled(service: ServiceThread, name: str) -> dict[str, Any]:
    """The solver's latest fade, once its debit is settled (as the admin API shows it)."""
    seen: list[dict[str, Any]] = []

    def settled() -> bool:
        answer = httpx.get(f"{service.base_url}/admin/solvers/{name}", headers=OPERATOR)
        seen.append(answer.json())
        fades = seen[-1].get("fades") or []
        return bool(fades) and fades[0]["state"] not in ("owed", "sending")

    assert wait_for(settled, timeout=20, interval=0.25), seen[-1:]
    fade: dict[str, Any] = seen[-1]["fades"][0]
    return fade


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


def _check_penalised(
    service: ServiceThread,
    devnet: RunningDevnet,
    quote: dict[str, Any],
    status: dict[str, Any],
    solver: str,
    bonded: int,
    fade: dict[str, Any],
) -> None:
    """The fade cost the operator the solver's output above its own, and the fallback's gas:
    a debit of its bond (as the chain logged it), booked; its cooldown the base (a first fade)."""
    (row,) = stored_rows(service, select(Request).where(Request.id == quote_request_id(quote)))
    destination = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION]))
    fallback = destination.eth.get_transaction_receipt(status["txHashes"][0])
    gas = fallback["gasUsed"] * fallback["effectiveGasPrice"]
    cost = int(row.amount_out) - int(row.operator_amount_out) + gas
    assert (fade["state"], fade["cost"], fade["debited"]) == ("debited", str(cost), str(cost))
    assert _bond(devnet, solver) == bonded - cost
    debits = [debit for debit in _debits(devnet) if debit[0] == solver]
    assert debits == [(solver, cost, bytes.fromhex(row.order_id[2:]))], debits
    cooled = datetime.fromisoformat(fade["cooldownUntil"])
    assert fade["consecutive"] == 1
    assert cooled - datetime.fromisoformat(fade["createdAt"]) == timedelta(seconds=COOLDOWN)
    with httpx.Client(base_url=service.base_url, headers=OPERATOR, timeout=10) as admin:
        shown = admin.get("/admin/solvers/fader").json()
        books = admin.get("/admin/books").json()
    assert shown["consecutiveFades"] == 1 and shown["cooldownUntil"] == fade["cooldownUntil"]
    assert datetime.fromisoformat(shown["cooldownUntil"]) > datetime.now(UTC)
    (destination_books,) = [c for c in books["chains"] if c["chainId"] == DESTINATION]
    (native_books,) = [c for c in destination_books["currencies"] if c["currency"] == NATIVE]
    assert native_books["fadePenalties"] == str(cost)


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
            bonded = _bond(devnet, fader.address)
            faded = _won_quote(filling_service, "fader")
            _deposited(devnet, faded)
            won_status = _final(filling_service, won, timeout=30)
            faded_status = _fallen_back(filling_service, destination, faded, timeout=40)
            fade = _fade_settled(filling_service, "fader")
            # Cooled down: not asked (its 1 bps would win), alpha wins again.
            assert _won_quote(filling_service, "alpha")

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

    _check_penalised(filling_service, devnet, faded, faded_status, fader.address, bonded, fade)
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
    # The service's books agree with the chains to the wei: the winner's fill and repayment
    # are none of its keys', the debit is the solver key's.
    books: list[dict[str, Any]] = []

    def exact() -> bool:
        answer = httpx.get(f"{base_url}/admin/books", headers=OPERATOR, timeout=30)
        books.append(answer.json())
        return not books[-1]["unexplained"] and all(
            row["difference"] == "0"
            for chain in books[-1]["chains"]
            for row in chain["reconciliation"]
        )

    assert wait_for(exact, timeout=30, interval=1), books[-1:]
    print(f"\nthe whole flow took {time.monotonic() - started:.1f} s")
