"""Withdrawals from the devnet perps exchange (1337) to an EVM chain: the two signatures made
by the exchange's own Python SDK and by plain eth-account, the transfer matched by its nonce,
the fill on the destination; and transfers that pay for nothing, refunded on the exchange."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import select

from crossfill.config import Deployment
from crossfill.devnet.exchange.process import ExchangeProcess
from crossfill.store.tables import Deposit, PerpsPayment
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    OPERATOR_TOKEN,
    REFUNDED,
    V2_STILL_SERVED,
    balance,
    final_status,
    journal,
    listed_v3,
    new_api_key,
    published_statuses,
    request_quote,
    rpc_urls,
    stored_rows,
    usdc,
)
from tests.e2e.conftest import validate_against
from tests.e2e.perps.conftest import PERPS_ID as PERPS
from tests.e2e.perps.conftest import PERPS_USDC, exchange_info, ledger, withdrawable
from tests.e2e.perps.withdrawing import deployment_file, fund_on_exchange
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for
from tests.support.wallets.perps import Signer, post_to_exchange, sign_authorization, signed_deposit

AMOUNT = 25_000_000  # 25 USDC (perps USD has 6 decimals)


@pytest.fixture
def service(start_service: StartService, perps_deployment: Deployment) -> ServiceThread:
    return start_service(
        perps_deployment,
        run_workers=True,
        settings={"admin_token": OPERATOR_TOKEN},
        wall_clock=lambda: V2_STILL_SERVED,
    )


@pytest.fixture
def perps_file(devnet: RunningDevnet, exchange: ExchangeProcess, tmp_path: Path) -> Path:
    return deployment_file(devnet, exchange, tmp_path)


@pytest.fixture
def client(service: ServiceThread) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        yield http


def _funded(exchange: ExchangeProcess, perps_file: Path, usd: str = "100") -> LocalAccount:
    user: LocalAccount = Account.create()
    fund_on_exchange(perps_file, perps_file.parent, user.address, usd=usd)
    assert withdrawable(exchange, user.address) == Decimal(usd)
    return user


def _withdrawal(devnet: RunningDevnet, user: str, **fields: Any) -> dict[str, Any]:
    return {
        "user": user, "originChainId": PERPS, "destinationChainId": DESTINATION,
        "originCurrency": PERPS_USDC, "destinationCurrency": usdc(devnet, DESTINATION),
        "amount": str(AMOUNT), "tradeType": "EXACT_INPUT", "protocolVersion": "v2", **fields,
    }  # fmt: skip


def _authorize(client: httpx.Client, wallet: LocalAccount, step: dict[str, Any],
               signer: Signer) -> None:  # fmt: skip
    item = step["items"][0]
    post = item["data"]["post"]
    answer = client.post(
        post["endpoint"],
        params={"signature": sign_authorization(wallet, item, signer)},
        json=post["body"],
    )
    assert answer.status_code == 200, answer.text


def _shown(tx: dict[str, Any]) -> tuple[str, int, int, int, str]:
    """A record's transaction entry: (hash, chain, block, timestamp, status)."""
    return tx["txHash"], tx["chainId"], tx["block"], tx["timestamp"], tx["status"]


def _on_ledger(entry: dict[str, Any]) -> tuple[str, int, int, int, str]:
    """A ledger entry as a record shows it: the exchange has no blocks (`block` 0), and the
    entry's time is in milliseconds."""
    return entry["hash"], PERPS, 0, entry["time"] // 1000, "success"


def _refund_of(service: ServiceThread, transfer_hash: str) -> Deposit | None:
    (deposit,) = stored_rows(service, select(Deposit).where(Deposit.tx_hash == transfer_hash))
    return deposit if deposit.refund_status == "done" else None


def _last_transfer_hash(service: ServiceThread, user: str) -> str:
    def seen() -> bool:
        return bool(stored_rows(service, select(Deposit).where(Deposit.depositor == user.lower())))

    assert wait_for(seen, timeout=20, interval=0.2), "the watcher never saw the transfer"
    rows = stored_rows(
        service, select(Deposit).where(Deposit.depositor == user.lower()).order_by(Deposit.id)
    )
    return str(rows[-1].tx_hash)


@pytest.mark.parametrize("signer", ["exchange-sdk", "eth-account"])
def test_withdrawal_signed_by_the_wallet_arrives_on_the_evm_chain(
    client: httpx.Client,
    service: ServiceThread,
    devnet: RunningDevnet,
    exchange: ExchangeProcess,
    perps_file: Path,
    signer: Signer,
) -> None:
    user = _funded(exchange, perps_file)
    destination_usdc = usdc(devnet, DESTINATION)
    before = balance(devnet, DESTINATION, destination_usdc, user.address)
    key = new_api_key(client, f"perps-{signer}")
    answer = client.post(
        "/quote/v2", json=_withdrawal(devnet, user.address), headers={"x-api-key": key}
    )
    assert answer.status_code == 200, answer.text
    quote = answer.json()
    validate_against("quote", quote)
    # The user's perps USDC, as the exchange's clearinghouse holds it.
    held = withdrawable(exchange, user.address) * 10**6
    assert quote["details"]["userBalance"] == str(int(held)) == str(100 * 10**6)
    authorize, deposit = quote["steps"]
    assert [authorize["id"], deposit["id"]] == ["authorize", "deposit"]
    request_id = deposit["requestId"]

    _authorize(client, user, authorize, signer)
    accepted = post_to_exchange(exchange, signed_deposit(user, deposit["items"][0], signer))
    assert accepted["status"] == "ok", accepted

    status = final_status(client, request_id)
    assert status["status"] == "success", status
    received = balance(devnet, DESTINATION, destination_usdc, user.address) - before
    assert received == int(quote["details"]["currencyOut"]["amount"]) > 0
    assert withdrawable(exchange, user.address) == Decimal(100) - Decimal(AMOUNT) / 10**6
    (transfer_hash,) = status["inTxHashes"]
    assert len(status["txHashes"]) == 1
    # The exchange's ledger is final at once: no `waiting` with a deposit hash first.
    assert published_statuses(service, request_id) == ["pending", "submitted", "success"]

    (legacy,) = client.get("/requests/v2", params={"id": request_id}).json()["requests"]
    assert legacy["status"] == "success"
    assert [tx["hash"] for tx in legacy["data"]["inTxs"]] == [transfer_hash]
    (record,) = listed_v3(client, key, id=request_id)["requests"]
    assert record["requestType"] == "Bridge" and record["features"] == []
    entries = {entry["hash"]: entry for entry in ledger(exchange, user.address)}
    assert [_shown(tx) for tx in record["data"]["inTxs"]] == [_on_ledger(entries[transfer_hash])]
    assert [tx["chainId"] for tx in record["data"]["outTxs"]] == [DESTINATION]
    # What landed on the ledger and what arrived, valued; the fees are what the transfer lost.
    route = record["data"]["route"]["actual"]
    paid_in = route["origin"]["inputCurrency"]
    assert (paid_in["amount"], paid_in["amountUsd"]) == (str(AMOUNT), "25")
    arrived = route["destination"]["outputCurrency"]
    assert arrived["amount"] == str(received)
    fees = record["data"]["fees"]["actual"]
    assert fees is not None
    charged = Decimal(fees["execution"]["usd"]) + Decimal(fees["platform"]["usd"])
    assert charged == Decimal(paid_in["amountUsd"]) - Decimal(arrived["amountUsd"])


def test_withdrawal_without_protocol_version_v2_is_400(
    client: httpx.Client, devnet: RunningDevnet
) -> None:
    user = Account.create().address
    for fields in ({"protocolVersion": None}, {"protocolVersion": "preferV2"}):
        body = {k: v for k, v in _withdrawal(devnet, user, **fields).items() if v is not None}
        answer = client.post("/quote/v2", json=body)
        assert answer.status_code == 400, answer.text
        error = answer.json()
        assert error["errorCode"] == "UNSUPPORTED_EXECUTION_TYPE"
        assert "protocolVersion" in error["message"] and "v2" in error["message"]


def test_transfer_under_an_unmapped_nonce_is_refunded_on_the_exchange(
    client: httpx.Client,
    service: ServiceThread,
    devnet: RunningDevnet,
    exchange: ExchangeProcess,
    perps_file: Path,
) -> None:
    user = _funded(exchange, perps_file)
    quote = request_quote(client, _withdrawal(devnet, user.address))
    authorize, deposit = quote["steps"]
    _authorize(client, user, authorize, "eth-account")
    item = deposit["items"][0]
    wrong_nonce = item["data"]["nonce"] + 1
    body = signed_deposit(user, item, "exchange-sdk", nonce=wrong_nonce)
    assert post_to_exchange(exchange, body)["status"] == "ok"

    transfer_hash = _last_transfer_hash(service, user.address)
    assert wait_for(lambda: _refund_of(service, transfer_hash) is not None, timeout=20)
    refunded = _refund_of(service, transfer_hash)
    assert refunded is not None and refunded.outcome == "ORPHANED_DEPOSIT_REFUND"
    assert refunded.request_id is None
    assert withdrawable(exchange, user.address) == Decimal(100)
    (payment,) = stored_rows(
        service, select(PerpsPayment).where(PerpsPayment.payment_key == transfer_hash)
    )
    assert (payment.purpose, payment.status) == ("refund", "credited")
    assert payment.destination == user.address.lower()
    # The request was never paid: it still waits for its transfer.
    status = client.get("/intents/status/v3", params={"requestId": deposit["requestId"]}).json()
    assert status["status"] == "waiting"


def test_transfer_of_another_amount_is_refunded_and_the_request_says_why(
    client: httpx.Client,
    service: ServiceThread,
    devnet: RunningDevnet,
    exchange: ExchangeProcess,
    perps_file: Path,
) -> None:
    user = _funded(exchange, perps_file)
    quote = request_quote(client, _withdrawal(devnet, user.address))
    authorize, deposit = quote["steps"]
    _authorize(client, user, authorize, "exchange-sdk")
    body = signed_deposit(user, deposit["items"][0], "eth-account", amount="20")
    assert post_to_exchange(exchange, body)["status"] == "ok"

    status = final_status(client, deposit["requestId"], until=REFUNDED)
    assert status["failReason"] == "DEPOSITED_AMOUNT_TOO_LOW_TO_FILL"
    (transfer_hash,) = status["inTxHashes"]
    (refund_hash,) = status["txHashes"]
    refunded = _refund_of(service, transfer_hash)
    assert refunded is not None and refunded.refund_tx_hash == refund_hash
    assert withdrawable(exchange, user.address) == Decimal(100)
    assert published_statuses(service, deposit["requestId"]) == ["failure", "refund"]

    # The record shows both ledger entries as the exchange's ledger has them.
    entries = {entry["hash"]: entry for entry in ledger(exchange, user.address)}
    key = new_api_key(client, "perps-refund-records")
    (record,) = listed_v3(client, key, id=deposit["requestId"])["requests"]
    data = record["data"]
    assert [_shown(tx) for tx in data["inTxs"]] == [_on_ledger(entries[transfer_hash])]
    assert [_shown(tx) for tx in data["outTxs"]] == [_on_ledger(entries[refund_hash])]
    refunds = record["protocol"]["settlement"]["destination"]["refunds"]
    assert refunds == [{"chainId": PERPS, "transactionId": refund_hash}]
    assert record["protocol"]["settlement"]["destination"]["fills"] == []
    paid_back = data["refundCurrencyData"]
    assert (paid_back["currency"]["address"], paid_back["amountFormatted"]) == (PERPS_USDC, "20")


SDK_SCRIPT = Path(__file__).parent.parent / "sdk" / "perps_withdraw.mjs"


def test_the_official_sdk_withdraws_from_the_exchange(
    service: ServiceThread, devnet: RunningDevnet, exchange: ExchangeProcess, perps_file: Path
) -> None:
    """The SDK signs both steps itself and posts the transfer to the exchange; it posts to
    the real exchange's fixed URL, which the harness redirects to the devnet exchange (see
    the script)."""
    node = shutil.which("node")
    assert node is not None, "node is required by the SDK test"
    user = _funded(exchange, perps_file)
    destination_usdc = usdc(devnet, DESTINATION)
    before = balance(devnet, DESTINATION, destination_usdc, user.address)
    arguments = {
        "baseApiUrl": service.base_url,
        "exchangeUrl": exchange.api_url,
        "privateKey": "0x" + bytes(user.key).hex(),
        "walletRpcUrl": rpc_urls(devnet)[DESTINATION],
        "destinationChainId": DESTINATION,
        "originCurrency": PERPS_USDC,
        "destinationCurrency": destination_usdc,
        "amount": str(AMOUNT),
    }
    run = subprocess.run(
        [node, str(SDK_SCRIPT), json.dumps(arguments)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-4000:]
    outcome = json.loads(run.stdout.strip().splitlines()[-1])
    assert outcome["stepIds"] == ["authorize", "deposit"]
    assert outcome["executedStepIds"] == ["authorize", "hyperliquid-signature"]
    assert outcome["itemStatuses"] == ["complete", "complete"]
    assert outcome["redirected"] == [f"{exchange.api_url}/exchange"]
    received = balance(devnet, DESTINATION, destination_usdc, user.address) - before
    assert received == int(outcome["quotedOutput"]) > 0
    assert withdrawable(exchange, user.address) == Decimal(100) - Decimal(AMOUNT) / 10**6
    (fill,) = outcome["txHashes"]
    assert fill["chainId"] == DESTINATION
    assert published_statuses(service, outcome["requestId"])[-1] == "success"


def test_a_transfer_made_while_the_service_is_down_is_filled_once_across_restarts(
    start_service: StartService,
    perps_deployment: Deployment,
    devnet: RunningDevnet,
    exchange: ExchangeProcess,
    perps_file: Path,
) -> None:
    """The watcher's cursor is durable: a restart neither misses the transfer made while no
    watcher ran nor counts it again once it is settled; and a replayed transfer is refused
    by the exchange (one nonce, once)."""
    user = _funded(exchange, perps_file)
    destination_usdc = usdc(devnet, DESTINATION)
    before = balance(devnet, DESTINATION, destination_usdc, user.address)
    first = start_service(perps_deployment, run_workers=True)
    with httpx.Client(base_url=first.base_url, timeout=10) as http:
        quote = request_quote(http, _withdrawal(devnet, user.address))
        authorize, deposit = quote["steps"]
        _authorize(http, user, authorize, "eth-account")
    first.stop()
    body = signed_deposit(user, deposit["items"][0], "exchange-sdk")
    assert post_to_exchange(exchange, body)["status"] == "ok"
    replayed = post_to_exchange(exchange, body)
    assert replayed["status"] == "err" and "nonce" in replayed["response"].lower()

    for restart in range(2):
        service = start_service(perps_deployment, run_workers=True)
        with httpx.Client(base_url=service.base_url, timeout=10) as http:
            status = final_status(http, deposit["requestId"])
        assert status["status"] == "success", (restart, status)
        if restart == 1:
            time.sleep(1)  # a few watcher ticks over the same ledger
        service.stop()
    rows = stored_rows(service, select(Deposit).where(Deposit.depositor == user.address.lower()))
    assert len(rows) == 1 and rows[0].outcome == "ACCEPTED"
    assert len(journal(service, deposit["requestId"])) == 1
    received = balance(devnet, DESTINATION, destination_usdc, user.address) - before
    assert received == int(quote["details"]["currencyOut"]["amount"])
    assert withdrawable(exchange, user.address) == Decimal(100) - Decimal(AMOUNT) / 10**6


def _spot_total(exchange: ExchangeProcess, user: str, coin: str) -> Decimal:
    state = exchange_info(exchange, type="spotClearinghouseState", user=user)
    held = {b["coin"]: Decimal(b["total"]) for b in state["balances"]}
    return held.get(coin, Decimal(0))


def test_transfer_of_another_token_is_refunded_in_that_token(
    client: httpx.Client,
    service: ServiceThread,
    devnet: RunningDevnet,
    exchange: ExchangeProcess,
    perps_file: Path,
) -> None:
    user: LocalAccount = Account.create()
    fund_on_exchange(perps_file, perps_file.parent, user.address, token="HYPE", amount="40")
    quote = request_quote(client, _withdrawal(devnet, user.address))
    authorize, deposit = quote["steps"]
    _authorize(client, user, authorize, "eth-account")
    body = signed_deposit(
        user, deposit["items"][0], "eth-account", token="HYPE:0x0d01dc56dcaaca66ad901c959b4011ec",
        sourceDex="spot", destinationDex="spot", amount="25",
    )  # fmt: skip
    assert post_to_exchange(exchange, body)["status"] == "ok"
    assert _spot_total(exchange, user.address, "HYPE") == Decimal(15)

    status = final_status(client, deposit["requestId"], until=REFUNDED)
    assert status["failReason"] == "INCORRECT_DEPOSIT_CURRENCY"
    assert len(status["txHashes"]) == 1
    assert _spot_total(exchange, user.address, "HYPE") == Decimal(40)


def test_transfer_signed_by_another_wallet_pays_nothing_and_is_refunded_to_that_wallet(
    client: httpx.Client,
    service: ServiceThread,
    devnet: RunningDevnet,
    exchange: ExchangeProcess,
    perps_file: Path,
) -> None:
    """A transfer under the quote's nonce from another (funded) account pays nothing and goes
    back to its own sender, even when that account mapped its nonce to the user's request
    (anyone may sign a mapping; only the request's user may pay for it, or fail it)."""
    user, stranger = _funded(exchange, perps_file), _funded(exchange, perps_file)
    quote = request_quote(client, _withdrawal(devnet, user.address))
    authorize, deposit = quote["steps"]
    _authorize(client, user, authorize, "eth-account")
    theirs = json.loads(json.dumps(authorize))
    data = theirs["items"][0]["data"]
    for part in (data["sign"]["value"], data["post"]["body"]):
        part["wallet"] = part["depositor"] = stranger.address
    _authorize(client, stranger, theirs, "eth-account")
    body = signed_deposit(stranger, deposit["items"][0], "eth-account", amount="20")
    assert post_to_exchange(exchange, body)["status"] == "ok"

    transfer_hash = _last_transfer_hash(service, stranger.address)
    assert wait_for(lambda: _refund_of(service, transfer_hash) is not None, timeout=20)
    assert withdrawable(exchange, stranger.address) == Decimal(100)
    assert withdrawable(exchange, user.address) == Decimal(100)
    status = client.get("/intents/status/v3", params={"requestId": deposit["requestId"]}).json()
    assert status["status"] == "waiting"


def test_a_transfer_beyond_the_users_balance_is_refused_by_the_exchange_and_nothing_moves(
    client: httpx.Client,
    service: ServiceThread,
    devnet: RunningDevnet,
    exchange: ExchangeProcess,
    perps_file: Path,
) -> None:
    user = _funded(exchange, perps_file, usd="10")
    quote = request_quote(client, _withdrawal(devnet, user.address))
    authorize, deposit = quote["steps"]
    _authorize(client, user, authorize, "exchange-sdk")
    refused = post_to_exchange(exchange, signed_deposit(user, deposit["items"][0], "exchange-sdk"))
    assert refused["status"] == "err" and "insufficient balance" in refused["response"].lower()
    time.sleep(1)  # a few watcher ticks: nothing reached the solver's account
    deposits = select(Deposit).where(Deposit.depositor == user.address.lower())
    assert stored_rows(service, deposits) == []
    assert withdrawable(exchange, user.address) == Decimal(10)
    status = client.get("/intents/status/v3", params={"requestId": deposit["requestId"]}).json()
    assert status["status"] == "waiting"


def test_a_withdrawal_beyond_the_solvers_inventory_is_400(
    client: httpx.Client, devnet: RunningDevnet
) -> None:
    user = Account.create().address
    solver_holds = balance(
        devnet, DESTINATION, usdc(devnet, DESTINATION), devnet.deployment.solver.address
    )
    body = _withdrawal(devnet, user, amount=str(2 * solver_holds))
    answer = client.post("/quote/v2", json=body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["errorCode"] == "INSUFFICIENT_LIQUIDITY"
