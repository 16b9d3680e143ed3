"""ERC-7683 orders on the devnet, through the real service: opened with `openFor` under a user's
EIP-712 signature (made by eth-account) or with `open`, taken by the indexer from the settler's
`Open` event, filled through the destination settler (`success`, the solver repaid from the
deposit), or refused and refunded (`refund`), listed and published like any request; the
service process killed with SIGKILL while they are in flight loses nothing and pays nothing
twice."""

from __future__ import annotations

import itertools
import random
import time
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest
import tomli_w
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import select
from web3 import Web3
from web3.logs import DISCARD

from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.domain.erc7683 import ORDER_DATA_TYPE, CrossfillOrderData
from crossfill.domain.status import RequestStatus, can_move
from crossfill.kinds.evm.config import evm_chains
from crossfill.store.tables import OutboxEvent, Repayment
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    OPERATOR_TOKEN,
    ORIGIN,
    balance,
    funded_user,
    listed_v3,
    new_api_key,
    rpc_urls,
    usdc,
)
from tests.e2e.conftest import on_database
from tests.e2e.repaying import depository_payouts, repayments
from tests.money_invariant import account_for_money, heads, wait_until_accounted
from tests.support.database import rows_in
from tests.support.erc7683 import erc7683_request_id, gasless_order_tuple, sign_gasless_order
from tests.support.service import ServiceProcess, service_settings
from tests.support.waiting import wait_for

USDC = 10**6
INPUT = 50 * USDC
KILLS = 3


def _deployment(devnet: RunningDevnet, path: Path) -> Path:
    """The devnet's deployment, repaying the solver as soon as a fill is mined."""
    document: dict[str, Any] = tomllib.loads(devnet.deployment_path.read_text())
    document["repayment"] = {"max_age_seconds": 0, "min_batch_value_usd": "0"}
    for chain in document["chains"]:
        if chain["id"] == DESTINATION:
            chain["confirmations"] = [{"blocks": 1}]
    path.write_text(tomli_w.dumps(document))
    return path


@pytest.fixture
def service_process(devnet: RunningDevnet, tmp_path: Path, database: str | None):
    deployment = _deployment(devnet, tmp_path / "deployment.toml")
    home = tmp_path / "home"
    home.mkdir()
    settings = on_database(database, admin_token=OPERATOR_TOKEN)
    service = ServiceProcess(service_settings(home, deployment, **settings))
    service.start()
    yield service
    service.stop()


def _settlers(devnet: RunningDevnet) -> tuple[str, str]:
    origin, destination = evm_chains(devnet.deployment)[:2]
    origin_settler = origin.contracts.erc7683_origin_settler
    destination_settler = destination.contracts.erc7683_destination_settler
    assert origin_settler is not None and destination_settler is not None
    return origin_settler, destination_settler


def _gasless_order(
    devnet: RunningDevnet, user: LocalAccount, recipient: str, output: int, nonce: int
) -> dict[str, Any]:
    origin_settler, destination_settler = _settlers(devnet)
    data = CrossfillOrderData(
        input_token=usdc(devnet, ORIGIN),
        input_amount=INPUT,
        destination_chain_id=DESTINATION,
        destination_settler=destination_settler,
        output_token=usdc(devnet, DESTINATION),
        output_amount=output,
        recipient=recipient,
    )
    now = int(time.time())
    return {
        "originSettler": origin_settler,
        "user": user.address,
        "nonce": nonce,
        "originChainId": ORIGIN,
        "openDeadline": now + 600,
        "fillDeadline": now + 1800,
        "orderDataType": ORDER_DATA_TYPE,
        "orderData": data.encode(),
    }


def _open_for(devnet: RunningDevnet, relayer: LocalAccount, order: dict[str, Any]) -> str:
    """`openFor` sent by someone else than the user; the order's id from its `Open` event."""
    origin = evm_chains(devnet.deployment)[0]
    web3 = signing_web3(origin.rpc_url, relayer)
    settler = contract_at(web3, "CrossfillOriginSettler", order["originSettler"])
    user = order.pop("signer")
    signature = sign_gasless_order(user, order)
    receipt = send(web3, settler.functions.openFor(gasless_order_tuple(order), signature, b""))
    (opened,) = settler.events.Open().process_receipt(receipt, errors=DISCARD)
    return "0x" + bytes(opened.args["orderId"]).hex()


def _approve_settler(devnet: RunningDevnet, user: LocalAccount) -> None:
    origin = evm_chains(devnet.deployment)[0]
    holder = signing_web3(origin.rpc_url, user)
    token = contract_at(holder, "TestUSDC", usdc(devnet, ORIGIN))
    send(holder, token.functions.approve(_settlers(devnet)[0], 10 * INPUT))


def _status(http: httpx.Client, request_id: str) -> dict[str, Any]:
    response = http.get("/intents/status/v3", params={"requestId": request_id})
    return response.json() if response.status_code == 200 else {"status": "unknown"}


def _open(devnet: RunningDevnet, user: LocalAccount, recipient: str, output: int) -> str:
    """`open` sent by the user itself; the order's id from its `Open` event."""
    origin = evm_chains(devnet.deployment)[0]
    web3 = signing_web3(origin.rpc_url, user)
    order = _gasless_order(devnet, user, recipient, output, nonce=0)
    settler = contract_at(web3, "CrossfillOriginSettler", order["originSettler"])
    fields = (order["fillDeadline"], order["orderDataType"], order["orderData"])
    receipt = send(web3, settler.functions.open(fields))
    (opened,) = settler.events.Open().process_receipt(receipt, errors=DISCARD)
    return "0x" + bytes(opened.args["orderId"]).hex()


def _published(database: str) -> dict[str, list[str]]:
    """The statuses each request published (what webhooks and the websocket deliver)."""
    events: dict[str, list[str]] = {}
    for row in rows_in(database, select(OutboxEvent).order_by(OutboxEvent.id)):
        events.setdefault(row.request_id, []).append(row.payload["status"])
    return events


def _filled_ids(devnet: RunningDevnet) -> list[str]:
    destination = Web3(Web3.HTTPProvider(rpc_urls(devnet)[DESTINATION]))
    settler = contract_at(destination, "CrossfillDestinationSettler", _settlers(devnet)[1])
    return [
        "0x" + bytes(event.args["orderId"]).hex()
        for event in settler.events.OrderFilled().get_logs(from_block=0)
    ]


def test_orders_opened_for_a_signature_are_filled_or_refunded_across_kills(
    service_process: ServiceProcess, devnet: RunningDevnet
) -> None:
    rng = random.Random(7683)
    since = heads(devnet.deployment)
    user = funded_user(devnet, usdc_amount=3 * INPUT)
    relayer = funded_user(devnet)
    _approve_settler(devnet, user)
    filled_to, opened_to, refused_to = (Account.create().address for _ in range(3))
    # Half the input is covered whatever the fees; twice the input never is.
    fillable = {**_gasless_order(devnet, user, filled_to, INPUT // 2, nonce=1), "signer": user}
    too_much = {**_gasless_order(devnet, user, refused_to, 2 * INPUT, nonce=2), "signer": user}

    filled_id = _open_for(devnet, relayer, fillable)
    service_process.kill()
    service_process.start()
    refused_id = _open_for(devnet, relayer, too_much)
    opened_id = _open(devnet, user, opened_to, INPUT // 2)
    for _ in range(KILLS):
        time.sleep(rng.uniform(0.2, 1.2))
        service_process.kill()
        service_process.start()

    ids = {
        erc7683_request_id(filled_id): "success",
        erc7683_request_id(opened_id): "success",
        erc7683_request_id(refused_id): "refund",
    }
    with httpx.Client(base_url=service_process.base_url, timeout=10) as http:
        done = wait_for(
            lambda: all(_status(http, rid)["status"] == want for rid, want in ids.items()),
            timeout=180,
            interval=1,
        )
        final = {rid: _status(http, rid) for rid in ids}
        listed = listed_v3(http, new_api_key(http, "erc7683"), user=user.address)
    assert done, final

    # Paid once each, through the destination settler, to the recipients; never the refused.
    fills = _filled_ids(devnet)
    assert fills.count(filled_id) == 1 and fills.count(opened_id) == 1
    assert refused_id not in fills
    for recipient in (filled_to, opened_to):
        assert balance(devnet, DESTINATION, usdc(devnet, DESTINATION), recipient) >= INPUT // 2
    assert balance(devnet, DESTINATION, usdc(devnet, DESTINATION), refused_to) == 0
    # The refused order's input came back to the user, less its refund's gas, once.
    back = balance(devnet, ORIGIN, usdc(devnet, ORIGIN), user.address)
    assert INPUT * 9 // 10 < back < INPUT
    assert [p.recipient for p in depository_payouts(devnet)].count(user.address.lower()) == 1
    # The filled orders' deposits repay the solver, once each, the whole input.
    filled = {erc7683_request_id(filled_id), erc7683_request_id(opened_id)}

    def repaid() -> list[Repayment]:
        rows = [row for row in repayments(service_process.database) if row.request_id in filled]
        return rows if all(row.state == "repaid" for row in rows) else []

    assert wait_for(lambda: len(repaid()) == 2, timeout=60, interval=0.5)
    payouts = depository_payouts(devnet)
    hashes = {row.tx_hash for row in repaid()}
    solver = accounts.solver().address.lower()
    to_solver = [p.amount for p in payouts if p.tx_hash in hashes and p.recipient == solver]
    assert to_solver == [INPUT, INPUT]

    assert {request["id"]: request["status"] for request in listed["requests"]} == ids
    published = _published(service_process.database)
    for request_id, want in ids.items():
        statuses = published[request_id]
        assert statuses[-1] == want, statuses
        for current, following in itertools.pairwise(statuses):
            assert current == following or can_move(
                RequestStatus(current), RequestStatus(following)
            ), statuses
    assert "failure" in published[erc7683_request_id(refused_id)]

    # Every unit the orders brought is filled (and repaid) or refunded, once: nothing else.
    report = wait_until_accounted(
        lambda: account_for_money(devnet.deployment, service_process.database, since=since),
        timeout=60,
    )
    assert (report.deposits, report.filled, report.repaid, report.refunded) == (3, 2, 2, 1), (
        report.summary()
    )
    assert report.unaccounted == [] and report.unsettled == [], report.summary()
