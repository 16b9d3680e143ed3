"""Deposits to the perps exchange end to end: a deposit on an EVM chain, the solver paying the
recipient's exchange account by a signed transfer from its own, balances checked on both sides;
the status record's `outTxs` carries the exchange ledger's hash; `/chains` lists 1337; and the
quote's rules for 1337 routes."""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import httpx
import pytest
from eth_account import Account
from sqlalchemy import select

from crossfill.config.secrets import devnet_account
from crossfill.devnet import accounts
from crossfill.devnet.exchange.process import ExchangeProcess, fund
from crossfill.kinds.perps.actions import UsdSend, sign_action
from crossfill.store.tables import PerpsPayment
from crossfill_client import RequestFailed, RequestStatus
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    NATIVE,
    ORIGIN,
    balance,
    funded_user,
    listed_v3,
    new_api_key,
    published_statuses,
    stored_rows,
    usdc,
)
from tests.e2e.perps.conftest import (
    PERPS_ID,
    PERPS_USDC,
    ledger,
    perps_config,
    to_perps,
    withdrawable,
)
from tests.e2e.user_client import UserClient, evm_wallet, following_until, succeeded
from tests.e2e.wire import validate_against
from tests.support.service import ServiceThread, StartService
from tests.support.wallets.perps import post_to_exchange


def test_usdc_deposit_is_credited_to_the_recipients_exchange_account(
    devnet: RunningDevnet,
    exchange: ExchangeProcess,
    perps_service: ServiceThread,
    http: httpx.Client,
    user_client: UserClient,
) -> None:
    user, recipient = funded_user(devnet, usdc_amount=50 * 10**6), Account.create().address
    quote = user_client.quote(to_perps(user.address, recipient, usdc(devnet, ORIGIN), 20 * 10**6))
    amount_out = quote.details.currency_out.amount
    assert quote.details.currency_out.currency.address == PERPS_USDC
    assert quote.details.currency_out.currency.decimals == 6
    assert 19 * 10**6 < amount_out < 20 * 10**6  # less the service fee
    # The user's balance of the input, as the origin chain holds it.
    held = balance(devnet, ORIGIN, usdc(devnet, ORIGIN), user.address)
    assert quote.details.user_balance == str(held) == str(50 * 10**6)
    assert [step.id for step in quote.steps] == ["approve", "deposit"]
    wire: Any = user_client.answered("/quote/v2")
    order_data = wire["protocol"]["v2"]["orderData"]
    assert order_data["output"]["payments"][0]["expectedAmount"] == str(amount_out)
    solver_before = withdrawable(exchange, accounts.solver().address)
    status = succeeded(user_client.execute(quote, evm_wallet(user)))
    request_id = quote.request_id
    credited = Decimal(amount_out) / 10**6
    assert withdrawable(exchange, recipient) == credited
    assert withdrawable(exchange, accounts.solver().address) == solver_before - credited
    assert balance(devnet, ORIGIN, usdc(devnet, ORIGIN), user.address) == 30 * 10**6
    (entry,) = ledger(exchange, recipient)
    assert entry["delta"]["type"] == "send" and entry["delta"]["destination"] == recipient.lower()
    assert status.tx_hashes == (entry["hash"],)
    _check_v3_record(http, request_id, entry["hash"], "Bridge")
    # Every status change went out as an event (webhooks, websocket), in order.
    assert published_statuses(perps_service, request_id)[-3:] == ["pending", "submitted",
                                                                  "success"]  # fmt: skip


def _check_v3_record(http: httpx.Client, request_id: str, tx_hash: str, kind: str) -> None:
    """The listing's record: its kind, no features, and the exchange transfer in outTxs."""
    (record,) = listed_v3(http, new_api_key(http, "perps"), id=request_id)["requests"]
    assert record["requestType"] == kind
    assert record["features"] == []
    (out_tx,) = record["data"]["outTxs"]
    assert out_tx["chainId"] == PERPS_ID and out_tx["txHash"] == tx_hash
    assert out_tx["status"] == "success"


def test_eth_deposit_is_credited_as_perps_usdc(
    devnet: RunningDevnet, exchange: ExchangeProcess, http: httpx.Client, user_client: UserClient
) -> None:
    user, recipient = funded_user(devnet), Account.create().address
    quote = user_client.quote(to_perps(user.address, recipient, NATIVE, 10**16))
    amount_out = quote.details.currency_out.amount
    assert amount_out > 0 and quote.details.operation == "swap"
    succeeded(user_client.execute(quote, evm_wallet(user)))
    assert withdrawable(exchange, recipient) == Decimal(amount_out) / 10**6
    (entry,) = ledger(exchange, recipient)
    _check_v3_record(http, quote.request_id, entry["hash"], "Crosschain Swap")


def test_chains_lists_the_exchange(http: httpx.Client) -> None:
    response = http.get("/chains", params={"includeChains": str(PERPS_ID)})
    assert response.status_code == 200
    validate_against("chains", response.json())
    (chain,) = response.json()["chains"]
    assert chain["id"] == PERPS_ID and chain["vmType"] == "hypevm"
    assert chain["currency"]["address"] == PERPS_USDC and chain["currency"]["decimals"] == 6
    spot = {token["symbol"]: token for token in chain["erc20Currencies"]}
    assert spot["USDC"]["address"] == "0x6d1e7cde53ba9467b783cb7c530ce054"
    assert spot["USDC"]["decimals"] == 8
    assert chain["solverAddresses"] == [accounts.solver().address]


@pytest.mark.parametrize(
    ("changes", "code"),
    [
        ({"recipient": "EPjFWdd5AufqSSqeM2qACdYv6nQXBZkkk4Ht7dAJ2B8Q"}, "INVALID_RECIPIENT"),
        ({"recipient": "0x1234"}, "INVALID_RECIPIENT"),
        ({"destinationCurrency": "0x" + "1" * 32}, "UNSUPPORTED_CURRENCY"),
        ({"destinationCurrency": NATIVE}, "UNSUPPORTED_CURRENCY"),
        ({"tradeType": "EXACT_OUTPUT"}, "UNSUPPORTED_EXECUTION_TYPE"),
        ({"originChainId": 424242}, "UNSUPPORTED_CHAIN"),
        ({"amount": "1"}, "AMOUNT_TOO_LOW"),
    ],
)
def test_perps_routes_refuse_bad_input_with_a_clear_400(
    http: httpx.Client, changes: dict[str, Any], code: str
) -> None:
    body = {**to_perps(Account.create().address, Account.create().address, NATIVE, 10**16).wire(),
            **changes}  # fmt: skip
    response = http.post("/quote/v2", json=body)
    assert response.status_code == 400, response.text
    assert response.json()["errorCode"] == code
    validate_against("quote-error", response.json())


def test_an_output_the_account_no_longer_holds_is_refunded_without_a_transfer(
    devnet: RunningDevnet,
    exchange: ExchangeProcess,
    start_service: StartService,
    chain_urls: dict[int, str],
) -> None:
    """The solver's exchange account holds the output when quoted and spends it before the
    fill: the order waits the exchange's `inventory_wait_seconds`, then is refunded as over
    capacity; no transfer is posted to be refused, nothing is credited, the deposit is paid
    back."""
    solver = devnet_account(15)
    fund(exchange.api_url, solver.address, "10")
    config = perps_config(
        exchange, solver={"address": solver.address, "key": "devnet:15"}, inventory_wait_seconds=2
    )
    service = start_service(devnet.deployment.model_copy(update={"perps": config}),
                            run_workers=True)  # fmt: skip
    user, recipient = funded_user(devnet, usdc_amount=10 * 10**6), Account.create().address
    with UserClient(service.base_url, chain_urls) as user_client:
        quote = user_client.quote(to_perps(user.address, recipient, usdc(devnet, ORIGIN),
                                           10 * 10**6))  # fmt: skip
        spent = UsdSend(config.exchange_chain, config.signature_chain, Account.create().address,
                        "10", time=int(time.time() * 1000))  # fmt: skip
        posted = post_to_exchange(exchange, sign_action(spent, solver).request_body())
        assert posted["status"] == "ok", posted
        with pytest.raises(RequestFailed) as ended:
            user_client.execute(
                quote, evm_wallet(user), options=following_until(RequestStatus.REFUND)
            )
    status = ended.value.record
    assert status.status is RequestStatus.REFUND, status
    assert withdrawable(exchange, recipient) == 0
    # Paid back less the refund's gas.
    assert 9 * 10**6 < balance(devnet, ORIGIN, usdc(devnet, ORIGIN), user.address) <= 10 * 10**6
    assert status.fail_reason == "SOLVER_CAPACITY_EXCEEDED"
    assert stored_rows(service, select(PerpsPayment)) == []
