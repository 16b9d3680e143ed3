"""Reserved inventory on the SVM chain, over the real API and the devnet's SVM node: quotes to
it answer from the vault's free inventory (its balance less the outputs of the orders in
flight there), and deposits that together ask for more than the vault holds are paid in
deposit order while it covers them; the rest wait, then are refunded as over capacity, never
paid to fail."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from eth_account.signers.local import LocalAccount
from solders.keypair import Keypair
from sqlalchemy import select

from crossfill.config import Deployment
from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm, send
from crossfill.kinds.svm import programs
from crossfill.kinds.svm.config import SVM_CHAIN_ID, SVM_SECTION, svm_chains
from crossfill.store.tables import SvmPayment
from tests.conftest import RunningDevnet
from tests.e2e.bridging import NATIVE, ORIGIN, funded_user, request_quote, stored_rows
from tests.e2e.oversubscription import oversubscribe, refusal
from tests.e2e.svm.routes import SOL, to_svm
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for
from tests.support.wallets.svm import rpc

ORDER = 10**16  # 0.01 ETH in
ORDERS = 8
INVENTORY_WAIT_SECONDS = 8
SERVABLE = re.compile(r"\((\d+) in smallest units\) can be served now")


@pytest.fixture
def service(start_service: StartService, svm_deployment: Deployment) -> ServiceThread:
    (chain,) = svm_chains(svm_deployment)
    waiting = chain.model_copy(update={"inventory_wait_seconds": INVENTORY_WAIT_SECONDS})
    return start_service(svm_deployment.with_section(SVM_SECTION, (waiting,)), run_workers=True)


@pytest.fixture
def http(service: ServiceThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=10) as client:
        yield client


def _body(user: LocalAccount) -> dict[str, Any]:
    return to_svm(user.address, str(Keypair().pubkey()), (NATIVE, SOL), ORDER).wire()


def _capacity(http: httpx.Client) -> int:
    answer = http.get(
        "/config/v2",
        params={"originChainId": ORIGIN, "destinationChainId": SVM_CHAIN_ID, "currency": "sol"},
    )
    assert answer.status_code == 200, answer.text
    return int(answer.json()["solver"]["capacityPerRequest"])


def _vault_holding(node: SvmNodeProcess, lamports: int) -> int:
    """The vault's SOL brought down to about `lamports` (the rest sent away); what it holds."""
    vault = svm_accounts.solver()
    held = int(rpc(node.rpc_url, "getBalance", str(vault.pubkey()))["value"])
    away = Keypair().pubkey()
    send(node.rpc_url, [programs.transfer_sol(vault.pubkey(), away, held - lamports)], [vault])
    left = 0

    def landed() -> bool:
        nonlocal left
        left = int(rpc(node.rpc_url, "getBalance", str(vault.pubkey()))["value"])
        return left < held - lamports // 2

    assert wait_for(landed, timeout=10)
    return left


def test_oversubscribed_deposits_to_the_svm_chain_are_paid_while_covered_and_the_rest_refunded(
    devnet: RunningDevnet,
    svm_node: tuple[SvmNodeProcess, SeededSvm],
    service: ServiceThread,
    http: httpx.Client,
) -> None:
    node, _seeded = svm_node
    users = [funded_user(devnet) for _ in range(ORDERS + 1)]
    # What one order pays out, then a vault with room for three and a half of them.
    order_out = int(request_quote(http, _body(users[0]))["details"]["currencyOut"]["amount"])
    inventory = _vault_holding(node, 3 * order_out + order_out // 2)
    assert wait_for(lambda: _capacity(http) == inventory, timeout=10)
    unknown = http.get(
        "/config/v2",
        params={"originChainId": ORIGIN, "destinationChainId": SVM_CHAIN_ID, "currency": "doge"},
    )
    assert unknown.status_code == 400 and unknown.json()["errorCode"] == "UNSUPPORTED_CURRENCY"
    # A quote over the free inventory names what could be served.
    over = {**_body(users[0]), "amount": str(5 * ORDER)}
    refused = refusal(http, over)
    assert refused is not None and refused["errorCode"] == "INSUFFICIENT_LIQUIDITY", refused
    found = SERVABLE.search(refused["message"])
    assert found is not None, refused
    assert 0 < int(found.group(1)) < inventory  # the free inventory less the payment's fee

    outcome = oversubscribe(
        devnet,
        http,
        [(user, _body(user)) for user in users[:ORDERS]],
        late=_body(users[ORDERS]),
        capacity=lambda: _capacity(http),
        wait_seconds=INVENTORY_WAIT_SECONDS,
    )
    assert sum(outcome.outputs.values()) > 2 * inventory
    # Once the deposits are seen, what they commit is not quoted again.
    paid, refunded = outcome.paid_and_refunded_for_capacity(orders=ORDERS, order_out=order_out)
    # Nothing paid that the vault could not pay: one landed payment per paid order, none
    # refused, and what was paid fits in the inventory there was.
    payments = stored_rows(service, select(SvmPayment).where(SvmPayment.purpose == "fill"))
    assert sorted(row.payment_key for row in payments) == sorted(paid)
    assert {row.status for row in payments} == {"landed"}
    assert sum(outcome.outputs[rid] for rid in paid) <= inventory
    print(
        f"\nSVM: vault {inventory} lamports, {ORDERS} orders of {order_out}: "
        f"{len(paid)} paid, {len(refunded)} refunded SOLVER_CAPACITY_EXCEEDED"
    )
