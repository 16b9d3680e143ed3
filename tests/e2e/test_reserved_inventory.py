"""Reserved inventory on the devnet, over the real API: a quote answers from the solver's free
inventory (its balance less the outputs of orders in flight), and deposits that together ask
for more than the inventory holds are filled in deposit order while it covers them; the rest
wait, then are refunded as over capacity, never sent to fail."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from eth_typing import HexStr
from sqlalchemy import select
from web3 import Web3

from crossfill.devnet import accounts
from crossfill.devnet.anvil import set_native_balance
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.kinds.evm.config import evm_chains
from crossfill.store.tables import SentTransaction
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    ORIGIN,
    final_status,
    funded_user,
    request_quote,
    rpc_urls,
    stored_rows,
    usdc,
    with_inventory_wait,
)
from tests.e2e.deposits_together import deposit_all_in_one_block
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for

ETH = 10**18
ORDER = ETH // 10
ORDERS = 30
# Room for about a third of the orders.
INVENTORY = 10 * ORDER + ORDER // 2
# Long enough for the deposits to be seen on a loaded machine before the uncovered ones are
# refunded.
INVENTORY_WAIT_SECONDS = 15
SETTLED = frozenset({"success", "refund"})
SERVABLE = re.compile(r"\((\d+) in smallest units\) can be served now")


def _body(user: LocalAccount, **overrides: Any) -> dict[str, Any]:
    return {
        "user": user.address,
        "recipient": Account.create().address,
        "originChainId": ORIGIN,
        "destinationChainId": DESTINATION,
        "originCurrency": NATIVE,
        "destinationCurrency": NATIVE,
        "amount": str(ORDER),
        "tradeType": "EXACT_INPUT",
        **overrides,
    }


@contextmanager
def _solver_holding(devnet: RunningDevnet, amount: int) -> Iterator[None]:
    """The solver's destination balance set to `amount`, restored after."""
    url = rpc_urls(devnet)[DESTINATION]
    solver = accounts.solver().address
    held = Web3(Web3.HTTPProvider(url)).eth.get_balance(solver)
    set_native_balance(url, solver, amount)
    try:
        yield
    finally:
        set_native_balance(url, solver, held)


def _capacity(http: httpx.Client, **params: str) -> int:
    answer = http.get(
        "/config/v2",
        params={"originChainId": ORIGIN, "destinationChainId": DESTINATION, **params},
    )
    assert answer.status_code == 200, answer.text
    return int(answer.json()["solver"]["capacityPerRequest"])


def _refused(http: httpx.Client, body: dict[str, Any]) -> dict[str, Any] | None:
    answer = http.post("/quote/v2", json=body)
    if answer.status_code == 200:
        return None
    assert answer.status_code == 400, answer.text
    refusal: dict[str, Any] = answer.json()
    return refusal


def test_a_quote_over_free_inventory_names_what_could_be_served(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    service = start_service()
    user = funded_user(devnet)
    with _solver_holding(devnet, ORDER // 2), httpx.Client(base_url=service.base_url) as http:
        assert wait_for(lambda: _capacity(http) == ORDER // 2, timeout=10)
        refusal = _refused(http, _body(user))
        assert refusal is not None
        assert refusal["errorCode"] == "INSUFFICIENT_LIQUIDITY", refusal
        found = SERVABLE.search(refusal["message"])
        assert found is not None, refusal
        servable = int(found.group(1))
        assert 0 < servable < ORDER // 2  # the balance less the fill's gas
        # What it names is what it serves: that output, asked exactly, is quoted.
        exact = _body(user, amount=str(servable), tradeType="EXACT_OUTPUT")
        quote = request_quote(http, exact)
        assert int(quote["details"]["currencyOut"]["amount"]) == servable


def _fills(service: ServiceThread) -> list[SentTransaction]:
    """Every fill the service journalled on the destination (replacements included)."""
    return stored_rows(
        service,
        select(SentTransaction).where(
            SentTransaction.purpose == "fill", SentTransaction.chain_id == DESTINATION
        ),
    )


@dataclass(frozen=True)
class Case:
    """The currency the 30 orders bridge, each order's input and the solver's inventory."""

    name: str
    order: int
    inventory: int

    def currency(self, devnet: RunningDevnet, chain_id: int) -> str:
        return NATIVE if self.name == "ETH" else usdc(devnet, chain_id)

    def user(self, devnet: RunningDevnet) -> LocalAccount:
        """A user holding the order's input on the origin (USDC approved to the Depository,
        so the quote's one step is the deposit)."""
        if self.name == "ETH":
            return funded_user(devnet)
        user = funded_user(devnet, usdc_amount=self.order)
        origin = evm_chains(devnet.deployment)[0]
        holder = signing_web3(origin.rpc_url, user)
        token = contract_at(holder, "TestUSDC", usdc(devnet, ORIGIN))
        send(holder, token.functions.approve(origin.contracts.depository, self.order))
        return user

    def body(self, devnet: RunningDevnet, user: LocalAccount) -> dict[str, Any]:
        return _body(
            user,
            amount=str(self.order),
            originCurrency=self.currency(devnet, ORIGIN),
            destinationCurrency=self.currency(devnet, DESTINATION),
        )

    @contextmanager
    def solver_holding(self, devnet: RunningDevnet) -> Iterator[None]:
        if self.name == "ETH":
            with _solver_holding(devnet, self.inventory):
                yield
            return
        with _solver_holding_usdc(devnet, self.inventory):
            yield


CASES = (
    Case("ETH", ORDER, INVENTORY),
    Case("USDC", 100 * 10**6, 1050 * 10**6),  # under $1,000 each: one confirmation
)


@contextmanager
def _solver_holding_usdc(devnet: RunningDevnet, amount: int) -> Iterator[None]:
    """The solver's destination USDC brought down to `amount` (the rest sent away before the
    service starts signing with its key), minted back after."""
    destination = evm_chains(devnet.deployment)[1]
    token_address = usdc(devnet, DESTINATION)
    solver = signing_web3(destination.rpc_url, accounts.solver())
    token = contract_at(solver, "TestUSDC", token_address)
    held = int(token.functions.balanceOf(accounts.solver().address).call())
    away = Account.create().address
    send(solver, token.functions.transfer(away, held - amount))
    try:
        yield
    finally:
        minter = signing_web3(destination.rpc_url, accounts.deployer())
        minted = contract_at(minter, "TestUSDC", token_address)
        send(minter, minted.functions.mint(accounts.solver().address, held - amount))


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_oversubscribed_deposits_are_filled_while_covered_and_the_rest_refunded(
    start_service: StartService, devnet: RunningDevnet, case: Case
) -> None:
    users = [case.user(devnet) for _ in range(ORDERS)]
    destination = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION]))
    currency_out = case.currency(devnet, DESTINATION)
    with case.solver_holding(devnet):
        service = start_service(
            with_inventory_wait(devnet.deployment, INVENTORY_WAIT_SECONDS), run_workers=True
        )
        with httpx.Client(base_url=service.base_url, timeout=10) as http:
            statuses, outputs = _oversubscribed(devnet, http, case, users, currency_out)
    filled = [rid for rid, status in statuses.items() if status["status"] == "success"]
    refunded = [rid for rid, status in statuses.items() if status["status"] == "refund"]
    assert len(filled) + len(refunded) == ORDERS, {s["status"] for s in statuses.values()}
    assert filled and refunded, (len(filled), len(refunded))
    reasons = {statuses[rid]["failReason"] for rid in refunded}
    assert reasons == {"SOLVER_CAPACITY_EXCEEDED"}, reasons
    # Nothing sent that the balance could not pay: one fill per filled order, each mined
    # successfully, and what they paid out fits in the inventory there was.
    fills = _fills(service)
    assert sorted(str(row.request_id) for row in fills) == sorted(filled)
    for row in fills:
        receipt = destination.eth.get_transaction_receipt(HexStr(row.tx_hash))
        assert receipt["status"] == 1, row.tx_hash
    assert sum(outputs[rid] for rid in filled) <= case.inventory
    # Every refund paid on the origin chain.
    origin = Web3(Web3.HTTPProvider(rpc_urls(devnet)[ORIGIN]))
    for rid in refunded:
        (refund_hash,) = statuses[rid]["txHashes"]
        assert origin.eth.get_transaction_receipt(HexStr(refund_hash))["status"] == 1


def _oversubscribed(
    devnet: RunningDevnet,
    http: httpx.Client,
    case: Case,
    users: list[LocalAccount],
    currency_out: str,
) -> tuple[dict[str, dict[str, Any]], dict[str, int]]:
    """Quote every user (each fits), deposit all in one origin block, see a further quote
    refused while orders wait; every request's final status, and each one's output."""
    params = {"currency": "eth" if case.name == "ETH" else "usdc"}
    assert wait_for(lambda: _capacity(http, **params) == case.inventory, timeout=10)
    # Each quote fits the free inventory: a bare quote reserves nothing.
    quotes = [(user, request_quote(http, case.body(devnet, user))) for user in users]
    outputs = {
        quote["steps"][0]["requestId"]: int(quote["details"]["currencyOut"]["amount"])
        for _, quote in quotes
    }
    paid_out = {q["details"]["currencyOut"]["currency"]["address"].lower() for _, q in quotes}
    assert paid_out == {currency_out.lower()}
    assert sum(outputs.values()) > 2 * case.inventory
    deposit_all_in_one_block(devnet, quotes)
    # Once the deposits are seen, what they commit is not quoted again: free inventory is
    # gone while orders wait, and /config/v2 says so.
    late = case.user(devnet)
    # Each refusal, and the capacity /config/v2 answered right after it (read at once: once
    # the uncovered orders are refunded, free inventory is back).
    refusals: list[tuple[dict[str, Any], int]] = []

    def refused_now() -> bool:
        refusal = _refused(http, case.body(devnet, late))
        if refusal is not None:
            refusals.append((refusal, _capacity(http, **params)))
        return refusal is not None

    assert wait_for(refused_now, timeout=INVENTORY_WAIT_SECONDS, interval=0.2)
    refusal, capacity = refusals[-1]
    assert refusal["errorCode"] == "INSUFFICIENT_LIQUIDITY", refusal
    # /config/v2 agrees: not one more order fits (before the uncovered orders are refunded
    # nothing is free; after, what the covered ones left, less than an order).
    assert capacity < case.order
    statuses = {
        request_id: final_status(http, request_id, timeout=90, until=SETTLED)
        for request_id in outputs
    }
    return statuses, outputs
