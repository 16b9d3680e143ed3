"""What a mined sponsored call does to its request, on the devnet.

- A raw call (no `requestId`) that pays no quoted request is a `Call` request of its own:
  `depositing`, then `success` once mined.
- A raw call that deposits for a quoted order is that order's request, and the fill follows.
- A call for a quoted request that mined without depositing for it, or reverted, fails the
  request (`INCORRECT_PAYMENT`, `TRANSACTION_REVERTED` with the decoded revert), with its
  webhook event, the sponsor's spend recorded; so does a standalone call that reverted.

A call that reverts on chain has passed the simulation made when it was accepted: it is
accepted by an API-only service, then the chain changes under it (an allowance the batch uses
is revoked) before a service with workers sends it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from eth_account import Account
from eth_account.signers.local import LocalAccount
from sqlalchemy import select
from web3 import Web3

from crossfill.devnet import accounts
from crossfill.devnet.deploy import contract_at, send, signing_web3
from crossfill.kinds.evm.config import evm_chains
from crossfill.store.tables import GaslessExecution, OutboxEvent
from tests.conftest import RunningDevnet
from tests.e2e.bridging import (
    DESTINATION,
    NATIVE,
    OPERATOR_TOKEN,
    ORIGIN,
    V2_STILL_SERVED,
    balance,
    final_status,
    journal,
    listed_v3,
    published_statuses,
    request_quote,
    stored_rows,
    usdc,
)
from tests.e2e.conftest import on_database
from tests.e2e.gasless import (
    deploy_delegate,
    execute_body,
    origin_web3,
    quote_calls,
    signed_batch,
    sponsored_key,
    token_call,
    usdc_bridge_quote,
    user_with_usdc,
)
from tests.support.service import ServiceThread, StartService
from tests.support.waiting import wait_for

AMOUNT = 4_000_000
SETTINGS = {"admin_token": OPERATOR_TOKEN}


@dataclass
class Sponsored:
    """A service, its sponsored key (and id), and the devnet's BatchDelegate."""

    service: ServiceThread
    http: httpx.Client
    key: str
    key_id: int
    delegate: str

    def execute(self, body: dict[str, Any]) -> str:
        answer = self.http.post("/execute", json=body, headers={"x-api-key": self.key})
        assert answer.status_code == 200, answer.text
        assert answer.json()["message"] == "Transaction submitted"
        request_id: str = answer.json()["requestId"]
        return request_id

    def execution(self, request_id: str) -> GaslessExecution:
        (row,) = stored_rows(
            self.service, select(GaslessExecution).where(GaslessExecution.request_id == request_id)
        )
        assert isinstance(row, GaslessExecution)
        return row

    def events(self, request_id: str) -> list[OutboxEvent]:
        return stored_rows(
            self.service,
            select(OutboxEvent)
            .where(OutboxEvent.request_id == request_id)
            .order_by(OutboxEvent.id),
        )


@contextmanager
def _sponsored(service: ServiceThread, devnet: RunningDevnet) -> Iterator[Sponsored]:
    with httpx.Client(base_url=service.base_url, timeout=10) as http:
        key, key_id = sponsored_key(http, devnet)
        yield Sponsored(service, http, key, key_id, deploy_delegate(devnet))


def _allow(devnet: RunningDevnet, spender: str, amount: int) -> None:
    """The deployer (minting it) lets `spender` take `amount` of its USDC on ORIGIN (0
    revokes it)."""
    deployer = accounts.deployer()
    owner = signing_web3(evm_chains(devnet.deployment)[0].rpc_url, deployer)
    token = contract_at(owner, "TestUSDC", usdc(devnet, ORIGIN))
    if amount:
        send(owner, token.functions.mint(deployer.address, amount))
    send(owner, token.functions.approve(spender, amount))


def _spent_by_sponsor(devnet: RunningDevnet, before: int) -> int:
    return before - balance(devnet, ORIGIN, NATIVE, accounts.gas_sponsor().address)


def test_a_raw_call_for_no_quote_is_a_call_request_of_its_own(
    start_service: StartService, devnet: RunningDevnet, database: str | None
) -> None:
    service = start_service(
        run_workers=True,
        settings=on_database(database, **SETTINGS),
        wall_clock=lambda: V2_STILL_SERVED,
    )
    user = user_with_usdc(devnet, AMOUNT)
    friend = Account.create().address
    calls = [token_call(devnet, "transfer", friend, AMOUNT)]
    sponsor_before = balance(devnet, ORIGIN, NATIVE, accounts.gas_sponsor().address)
    with _sponsored(service, devnet) as sponsored:
        batch = signed_batch(origin_web3(devnet), user, sponsored.delegate, calls)
        request_id = sponsored.execute(execute_body(user.address, batch, None, subsidize=True))
        status = final_status(sponsored.http, request_id, timeout=30)
        (record,) = listed_v3(sponsored.http, sponsored.key, id=request_id)["requests"]
        v2 = sponsored.http.get("/requests/v2", params={"id": request_id}).json()["requests"]
        # Delegated now, the account is called again without an authorization (as the SDK
        # does for an account already delegated to its executor).
        again = signed_batch(origin_web3(devnet), user, sponsored.delegate, [], batch_nonce=1)
        body = execute_body(user.address, again, None)
        del body["data"]["authorizationList"]
        second_id = sponsored.execute(body)
        second = final_status(sponsored.http, second_id, timeout=30)

    (sent,) = journal(sponsored.service, request_id)
    assert status["status"] == "success", status
    assert status["inTxHashes"] == status["txHashes"] == [sent.tx_hash]
    assert (status["failReason"], status["details"]) == ("N/A", None)
    assert status["originChainId"] == status["destinationChainId"] == ORIGIN
    assert balance(devnet, ORIGIN, usdc(devnet, ORIGIN), friend) == AMOUNT
    assert balance(devnet, ORIGIN, NATIVE, user.address) == 0
    execution = sponsored.execution(request_id)
    assert execution.standalone and execution.state == "mined"
    second_spent = sponsored.execution(second_id).spent_wei
    assert execution.spent_wei and second_spent
    assert execution.spent_wei + second_spent == _spent_by_sponsor(devnet, sponsor_before)
    assert (record["requestType"], record["features"]) == ("Call", ["gasless_execution"])
    assert (record["user"], record["recipient"]) == (user.address.lower(), user.address.lower())
    assert record["protocol"] is None
    assert record["data"]["feeSponsorship"]["actual"]["gasPayment"]["amount"] == str(
        execution.spent_wei
    )
    assert [tx["txHash"] for tx in record["data"]["inTxs"]] == [sent.tx_hash]
    assert published_statuses(sponsored.service, request_id) == ["depositing", "success"]
    assert {event.api_key_id for event in sponsored.events(request_id)} == {sponsored.key_id}
    assert second_id != request_id and second["status"] == "success", second
    (v2_record,) = v2
    assert (v2_record["status"], v2_record["protocol"]) == ("success", None)
    assert v2_record["data"]["subsidizedRequest"] is True
    assert (v2_record["data"]["failReason"], v2_record["data"]["details"]) == ("N/A", None)


def test_a_raw_call_that_deposits_for_a_quoted_order_is_that_orders_request(
    start_service: StartService, devnet: RunningDevnet, database: str | None
) -> None:
    service = start_service(run_workers=True, settings=on_database(database, **SETTINGS))
    user = user_with_usdc(devnet, AMOUNT)
    recipient = Account.create().address
    with _sponsored(service, devnet) as sponsored:
        quote = usdc_bridge_quote(
            sponsored.http, devnet, user.address, recipient, AMOUNT, sponsored.key
        )
        batch = signed_batch(origin_web3(devnet), user, sponsored.delegate, quote_calls(quote))
        request_id = sponsored.execute(execute_body(user.address, batch, None))
        status = final_status(sponsored.http, request_id, timeout=60)

    assert request_id == quote["steps"][-1]["requestId"]
    assert status["status"] == "success", status
    received = balance(devnet, DESTINATION, usdc(devnet, DESTINATION), recipient)
    assert received == int(quote["details"]["currencyOut"]["amount"])
    assert not sponsored.execution(request_id).standalone
    assert published_statuses(sponsored.service, request_id) == [
        "depositing",
        "pending",
        "submitted",
        "success",
    ]


def test_a_gasless_same_chain_swap_settles_from_depositing(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    """A same-chain request's deposit is its Router batch: sent by the sponsor, it settles the
    request as the user's own transaction would."""
    service = start_service(run_workers=True, settings=SETTINGS)
    amount = 300 * 10**6
    user, recipient = user_with_usdc(devnet, amount), Account.create().address
    body = {
        "user": user.address, "recipient": recipient, "tradeType": "EXACT_INPUT",
        "originChainId": ORIGIN, "originCurrency": usdc(devnet, ORIGIN),
        "destinationChainId": ORIGIN, "destinationCurrency": NATIVE, "amount": str(amount),
    }  # fmt: skip
    with _sponsored(service, devnet) as sponsored:
        quote = request_quote(sponsored.http, body)
        request_id = quote["steps"][-1]["requestId"]
        batch = signed_batch(origin_web3(devnet), user, sponsored.delegate, quote_calls(quote))
        assert sponsored.execute(execute_body(user.address, batch, request_id)) == request_id
        status = final_status(sponsored.http, request_id, timeout=30)

    (sent,) = journal(service, request_id)
    assert status["status"] == "success", status
    assert status["inTxHashes"] == [sent.tx_hash]
    received = balance(devnet, ORIGIN, NATIVE, recipient)
    assert received >= int(quote["details"]["currencyOut"]["minimumAmount"]) > 0
    assert balance(devnet, ORIGIN, usdc(devnet, ORIGIN), user.address) == 0
    assert published_statuses(service, request_id) == ["depositing", "success"]
    # The indexer may settle it before the executor's next tick records the sponsor's spend.
    assert wait_for(lambda: sponsored.execution(request_id).state == "mined", timeout=10)


def test_a_call_that_mined_without_depositing_fails_its_quoted_request(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    service = start_service(run_workers=True, settings=SETTINGS)
    user = user_with_usdc(devnet, AMOUNT)
    depository = evm_chains(devnet.deployment)[0].contracts.depository
    sponsor_before = balance(devnet, ORIGIN, NATIVE, accounts.gas_sponsor().address)
    with _sponsored(service, devnet) as sponsored:
        quote = usdc_bridge_quote(
            sponsored.http, devnet, user.address, user.address, AMOUNT, sponsored.key
        )
        request_id = quote["steps"][-1]["requestId"]
        approve_only = [token_call(devnet, "approve", depository, AMOUNT)]
        batch = signed_batch(origin_web3(devnet), user, sponsored.delegate, approve_only)
        assert sponsored.execute(execute_body(user.address, batch, request_id)) == request_id
        status = final_status(sponsored.http, request_id, timeout=30)

    (sent,) = journal(sponsored.service, request_id)
    assert status["status"] == "failure", status
    assert status["failReason"] == "INCORRECT_PAYMENT"
    assert status["details"] == {
        "message": "the sponsored call mined without reverting but made no deposit for this "
        "request",
        "txHash": sent.tx_hash,
        "revert": None,
    }
    assert status["inTxHashes"] == [sent.tx_hash]
    assert balance(devnet, ORIGIN, usdc(devnet, ORIGIN), user.address) == AMOUNT  # kept
    execution = sponsored.execution(request_id)
    assert execution.state == "mined"
    assert execution.spent_wei == _spent_by_sponsor(devnet, sponsor_before) > 0
    events = sponsored.events(request_id)
    assert [event.payload["status"] for event in events] == ["depositing", "failure"]
    assert events[-1].payload["failReason"] == "INCORRECT_PAYMENT"
    assert events[-1].api_key_id == sponsored.key_id  # its webhook delivery


def _quoted_batch(
    devnet: RunningDevnet, user: LocalAccount, quote: dict[str, Any]
) -> list[dict[str, Any]]:
    """The quote's approve and deposit, after taking 1 unit of the deployer's USDC the user is
    allowed to take (revoked later, the whole batch reverts)."""
    deployer = accounts.deployer().address
    return [token_call(devnet, "transferFrom", deployer, user.address, 1), *quote_calls(quote)]


def test_calls_that_revert_on_chain_fail_their_requests_with_the_decoded_revert(
    start_service: StartService, devnet: RunningDevnet
) -> None:
    service = start_service(settings=SETTINGS)  # no workers: nothing is sent
    web3 = origin_web3(devnet)
    quoted_user, raw_user = user_with_usdc(devnet, AMOUNT), user_with_usdc(devnet, AMOUNT)
    for user in (quoted_user, raw_user):
        _allow(devnet, user.address, 1)
    with _sponsored(service, devnet) as accepting:
        quote = usdc_bridge_quote(
            accepting.http, devnet, quoted_user.address, quoted_user.address, AMOUNT, accepting.key
        )
        quoted_id = quote["steps"][-1]["requestId"]
        quoted = signed_batch(
            web3, quoted_user, accepting.delegate, _quoted_batch(devnet, quoted_user, quote)
        )
        assert accepting.execute(execute_body(quoted_user.address, quoted, quoted_id)) == quoted_id
        take = [
            token_call(devnet, "transferFrom", accounts.deployer().address, raw_user.address, 1)
        ]
        raw = signed_batch(web3, raw_user, accepting.delegate, take)
        raw_body = execute_body(raw_user.address, raw, None)
        raw_id = accepting.execute(raw_body)
        for user in (quoted_user, raw_user):
            _allow(devnet, user.address, 0)  # what both batches need is gone
        sponsor_before = balance(devnet, ORIGIN, NATIVE, accounts.gas_sponsor().address)
        sending = start_service(run_workers=True, settings=SETTINGS)
        with httpx.Client(base_url=sending.base_url, timeout=10) as http:
            statuses = {
                request_id: final_status(http, request_id, timeout=30)
                for request_id in (quoted_id, raw_id)
            }
            (raw_record,) = listed_v3(http, accepting.key, id=raw_id)["requests"]

    spent = 0
    for request_id, status in statuses.items():
        (sent,) = journal(sending, request_id)
        assert status["status"] == "failure", status
        assert status["failReason"] == "TRANSACTION_REVERTED"
        details = status["details"]
        assert details["txHash"] == sent.tx_hash == status["inTxHashes"][0]
        # BatchDelegate's CallFailed(index 0, the token's InsufficientAllowance)
        assert details["revert"]["error"] == "CallFailed"
        assert details["message"].startswith("the sponsored call reverted: CallFailed(0, 0x")
        assert (
            Web3.keccak(text="InsufficientAllowance(address,uint256,uint256)")[:4].hex()
            in (details["revert"]["data"])
        )
        execution = accepting.execution(request_id)
        assert execution.state == "reverted" and execution.spent_wei
        spent += execution.spent_wei
        events = accepting.events(request_id)
        assert [event.payload["status"] for event in events] == ["depositing", "failure"]
        assert events[-1].payload["details"] == details
        assert events[-1].api_key_id == accepting.key_id
    assert spent == _spent_by_sponsor(devnet, sponsor_before)
    assert balance(devnet, ORIGIN, usdc(devnet, ORIGIN), quoted_user.address) == AMOUNT
    data = raw_record["data"]
    assert (raw_record["requestType"], raw_record["status"]) == ("Call", "failure")
    assert data["failReason"] == "TRANSACTION_REVERTED"
    assert data["failedTxHash"] == statuses[raw_id]["inTxHashes"][0]
    assert data["failedCallData"] == {
        "from": accounts.gas_sponsor().address.lower(),
        "to": raw_user.address.lower(),
        "data": raw_body["data"]["data"],
        "value": "0",
    }
