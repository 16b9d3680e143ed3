"""The v3 request record of routes touching the SVM chain, against the chain itself: each
transaction's fee and block time as `getTransaction` answers them, the refund where an EVM
refund shows, the actual fees, the solver's protocol chain id, and the attestation of an SVM
request."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest
from eth_abi.abi import encode
from eth_account import Account
from eth_account.messages import encode_defunct
from eth_utils.crypto import keccak
from solders.keypair import Keypair
from solders.pubkey import Pubkey

from crossfill.config import Deployment
from crossfill.devnet import accounts
from crossfill.devnet.svm import accounts as svm_accounts
from crossfill.devnet.svm.process import SvmNodeProcess
from crossfill.devnet.svm.seed import SeededSvm
from crossfill.kinds.svm import programs
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    OPERATOR_TOKEN,
    REFUNDED,
    final_status,
    funded_user,
    listed_v3,
    new_api_key,
    request_quote,
)
from tests.e2e.svm.routes import SOL, from_svm, to_svm
from tests.e2e.user_client import UserClient, evm_wallet, succeeded, svm_wallet
from tests.support.service import ServiceThread, StartService
from tests.support.wallets.svm import rpc, sign_and_send

SVM_ID = 792703809
FEE = 5000  # lamports per signature


@pytest.fixture
def service(start_service: StartService, svm_deployment: Deployment) -> ServiceThread:
    """The service with workers, its admin API on (records are listed with a key)."""
    settings = {"admin_token": OPERATOR_TOKEN}
    return start_service(svm_deployment, run_workers=True, settings=settings)


def _landed(node: SvmNodeProcess, signature: str) -> dict[str, Any]:
    """The chain's own `getTransaction` answer."""
    found: dict[str, Any] = rpc(
        node.rpc_url, "getTransaction", signature,
        {"encoding": "json", "commitment": "confirmed", "maxSupportedTransactionVersion": 0},
    )  # fmt: skip
    return found


def _record(http: httpx.Client, request_id: str) -> dict[str, Any]:
    (record,) = listed_v3(http, new_api_key(http, "svm-records"), id=request_id)["requests"]
    shown: dict[str, Any] = record
    return shown


def _as_the_chain_says(node: SvmNodeProcess, shown: dict[str, Any]) -> None:
    """A record's transaction on the SVM chain shows the fee, block time and slot it landed
    with."""
    landed = _landed(node, shown["txHash"])
    assert shown["chainId"] == SVM_ID
    assert shown["fee"] == str(landed["meta"]["fee"]) == str(FEE)
    assert shown["timestamp"] == landed["blockTime"] > 0
    assert shown["block"] == landed["slot"]


def _filled_to_svm(
    devnet: RunningDevnet, user_client: UserClient, http: httpx.Client
) -> dict[str, Any]:
    """The record of an ETH deposit on the EVM origin filled in SOL on the SVM chain."""
    user, recipient = funded_user(devnet), Keypair().pubkey()
    quote = user_client.quote(to_svm(user.address, str(recipient), (NATIVE, SOL), 10**17))
    succeeded(user_client.execute(quote, evm_wallet(user)))
    return _record(http, quote.request_id)


def _filled_from_svm(
    user_client: UserClient, http: httpx.Client, user: Keypair, recipient: str
) -> dict[str, Any]:
    """The record of 2 SOL deposited through the quote's SVM transaction, filled in ETH."""
    quote = user_client.quote(from_svm(user, recipient, 2 * 10**9))
    succeeded(user_client.execute(quote, svm_wallet(user)))
    return _record(http, quote.request_id)


def test_an_svm_fill_shows_the_fee_and_block_time_it_landed_with(
    devnet: RunningDevnet,
    svm_node: tuple[SvmNodeProcess, SeededSvm],
    user_client: UserClient,
    http: httpx.Client,
) -> None:
    node, _seeded = svm_node
    record = _filled_to_svm(devnet, user_client, http)
    (fill,) = record["data"]["outTxs"]
    _as_the_chain_says(node, fill)
    assert record["data"]["fees"]["actual"] is not None


def test_an_svm_fill_names_the_chain_as_the_protocol_does(
    devnet: RunningDevnet, user_client: UserClient, http: httpx.Client
) -> None:
    record = _filled_to_svm(devnet, user_client, http)
    svm_chain = next(c for c in http.get("/chains").json()["chains"] if c["id"] == SVM_ID)
    solver = record["protocol"]["solver"]
    assert solver["protocolChainId"] == svm_chain["protocol"]["v2"]["chainId"] != str(SVM_ID)
    assert solver["chainId"] == SVM_ID


def test_an_svm_deposit_shows_the_fee_and_block_time_it_landed_with(
    svm_node: tuple[SvmNodeProcess, SeededSvm], user_client: UserClient, http: httpx.Client
) -> None:
    node, _seeded = svm_node
    record = _filled_from_svm(user_client, http, svm_accounts.users()[1], Account.create().address)
    (deposit,) = record["data"]["inTxs"]
    _as_the_chain_says(node, deposit)
    assert record["protocol"]["deposit"]["origin"]["transactionId"] == deposit["txHash"]


def test_an_svm_origin_success_has_its_actual_fees(
    user_client: UserClient, http: httpx.Client
) -> None:
    record = _filled_from_svm(user_client, http, svm_accounts.users()[2], Account.create().address)
    actual = record["data"]["fees"]["actual"]
    assert actual is not None
    route = record["data"]["route"]["actual"]
    deposited = route["origin"]["inputCurrency"]
    received = route["destination"]["outputCurrency"]
    assert deposited["amount"] == str(2 * 10**9) and Decimal(deposited["amountUsd"]) > 0
    # What the deposit lost beyond the fill's gas and the app fees is the platform's.
    usd = {name: Decimal(part["usd"]) for name, part in actual.items()}
    kept = Decimal(deposited["amountUsd"]) - Decimal(received["amountUsd"])
    assert usd["platform"] == kept - usd["execution"] - usd["app"] + usd["sponsored"]
    assert usd["execution"] > 0


def test_an_svm_request_is_attested_with_its_addresses_as_32_bytes(
    user_client: UserClient, http: httpx.Client
) -> None:
    user, recipient = svm_accounts.users()[3], Account.create().address
    request_id = _filled_from_svm(user_client, http, user, recipient)["id"]
    answer = http.get(f"/requests/{request_id}/signature")
    assert answer.status_code == 200, answer.text
    signed = answer.json()
    data = signed["requestData"]
    assert (data["originUser"], data["originCurrency"]) == (str(user.pubkey()), SOL)
    assert (data["originChainId"], data["originAmount"]) == (SVM_ID, str(2 * 10**9))
    words = encode(
        ["bytes32", "uint256", "bytes32", "bytes32", "uint256", "uint256", "bytes32"],
        [
            bytes.fromhex(request_id[2:]), SVM_ID, bytes(user.pubkey()),
            bytes(Pubkey.from_string(SOL)), 2 * 10**9, DESTINATION,
            bytes.fromhex(recipient[2:]).rjust(32, b"\0"),
        ],
    )  # fmt: skip
    signer = Account.recover_message(
        encode_defunct(primitive=keccak(words)), signature=signed["signature"]
    )
    assert signer == accounts.solver().address


def test_an_svm_refund_shows_where_an_evm_refund_shows(
    svm_node: tuple[SvmNodeProcess, SeededSvm], http: httpx.Client
) -> None:
    node, _seeded = svm_node
    user = svm_accounts.users()[4]
    quote = request_quote(http, from_svm(user, Account.create().address, 10**9).wire())
    request_id = quote["steps"][0]["requestId"]
    underpaid = programs.transfer_sol(user.pubkey(), svm_accounts.solver().pubkey(), 10**8)
    sign_and_send(
        node.rpc_url, [underpaid, programs.memo(quote["protocol"]["v2"]["orderId"])], user
    )
    status = final_status(http, request_id, until=REFUNDED)
    assert status["status"] == "refund"

    record = _record(http, request_id)
    (refund,) = record["data"]["outTxs"]
    assert status["txHashes"] == [refund["txHash"]]
    _as_the_chain_says(node, refund)
    refunds = record["protocol"]["settlement"]["destination"]["refunds"]
    assert refunds == [{"chainId": SVM_ID, "transactionId": refund["txHash"]}]
    assert record["data"]["refundCurrencyData"]["amount"] == str(10**8)
