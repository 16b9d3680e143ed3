"""The SVM client turns each node answer into its typed outcome (scripted HTTP transport)."""

from __future__ import annotations

import json
from base64 import b64encode
from collections.abc import Callable

import httpx
import pytest
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import Message
from solders.transaction import VersionedTransaction

from crossfill.chains.batching import Batching
from crossfill.errors import ChainError, ChainNotFound, ChainUnreachable, ProgramFailed, RateLimited
from crossfill.kinds.svm.client import BlockhashNotFound, OwnedTokenAccount, RpcError, SvmClient
from crossfill.kinds.svm.programs import TOKEN_ACCOUNT_SIZE, TOKEN_PROGRAM_ID, memo
from crossfill.types import ChainId

OWNER, MINT = Keypair().pubkey(), Keypair().pubkey()


def _client(answer: Callable[[httpx.Request], httpx.Response]) -> SvmClient:
    return SvmClient(ChainId(792703809), "http://svm.test", transport=httpx.MockTransport(answer))


def _error(code: int, message: str, data: object = None) -> httpx.Response:
    return httpx.Response(
        200,
        json={"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": message, "data": data}},
    )


def _result(result: object) -> httpx.Response:
    return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": result})


async def test_a_program_failure_in_preflight_is_program_failed() -> None:
    err = {"InstructionError": [0, {"Custom": 1}]}
    client = _client(
        lambda _r: _error(-32002, "Transaction simulation failed", {"err": err, "logs": ["x"]})
    )
    with pytest.raises(ProgramFailed) as failed:
        await client.send(_any_tx())
    assert failed.value.err == err and failed.value.logs == ("x",)


async def test_an_unknown_blockhash_is_not_a_program_failure() -> None:
    client = _client(lambda _r: _error(-32002, "failed", {"err": "BlockhashNotFound", "logs": []}))
    with pytest.raises(BlockhashNotFound):
        await client.send(_any_tx())


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        (lambda _r: httpx.Response(429, headers={"Retry-After": "3"}), RateLimited),
        (lambda _r: httpx.Response(502), ChainUnreachable),
        (
            lambda r: (_ for _ in ()).throw(httpx.ConnectError("refused", request=r)),
            ChainUnreachable,
        ),
        (lambda _r: httpx.Response(200, content=b"<html>"), ChainError),
        (lambda _r: _error(-32005, "node is behind"), RpcError),
    ],
)
async def test_transport_failures_are_retryable_outcomes_never_program_failed(
    answer: Callable[[httpx.Request], httpx.Response], outcome: type[Exception]
) -> None:
    with pytest.raises(outcome) as raised:
        await _client(answer).balance(OWNER)
    assert not isinstance(raised.value, ProgramFailed)


async def test_rate_limit_carries_retry_after() -> None:
    with pytest.raises(RateLimited) as raised:
        await _client(lambda _r: httpx.Response(429, headers={"Retry-After": "3"})).block_height()
    assert raised.value.retry_after_seconds == 3


async def test_missing_token_account_reads_as_zero_and_unknown_transaction_as_not_found() -> None:
    assert (
        await _client(lambda _r: _error(-32602, "not a Token account")).token_balance(OWNER, MINT)
        == 0
    )
    with pytest.raises(ChainNotFound):
        await _client(lambda _r: _result(None)).transaction("sig")
    assert (
        await _client(lambda _r: _result({"context": {}, "value": [None]})).signature_status("s")
        is None
    )


def _any_tx() -> VersionedTransaction:
    payer = Keypair()
    message = Message.new_with_blockhash([memo("m")], payer.pubkey(), Hash.default())
    return VersionedTransaction(message, [payer])


async def test_addresses_are_listed_in_one_batch_answered_in_the_calls_order() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        calls = json.loads(request.content)
        assert [call["params"][1].get("until") for call in calls] == [None, "sig-a"]
        # Answered out of order: matched back by id.
        return httpx.Response(
            200,
            json=[
                {"jsonrpc": "2.0", "id": call["id"], "result": [{"signature": call["params"][0]}]}
                for call in reversed(calls)
            ],
        )

    listed = await _client(answer).signatures_for_each([(OWNER, None), (MINT, "sig-a")], limit=5)
    assert listed == [[{"signature": str(OWNER)}], [{"signature": str(MINT)}]]


async def test_an_error_in_a_batch_is_its_outcome_and_a_missing_answer_a_chain_error() -> None:
    def failing(request: httpx.Request) -> httpx.Response:
        calls = json.loads(request.content)
        return httpx.Response(
            200, json=[{"jsonrpc": "2.0", "id": calls[0]["id"], "error": {"code": -32602}}]
        )

    with pytest.raises(RpcError):
        await _client(failing).signatures_for_each([(OWNER, None)], limit=5)
    with pytest.raises(ChainError, match="misses a call"):
        await _client(failing).signatures_for_each([(OWNER, None), (MINT, None)], limit=5)


async def test_a_node_that_refuses_batches_is_asked_one_call_at_a_time() -> None:
    bodies: list[object] = []

    def single_calls_only(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        bodies.append(body)
        if isinstance(body, list):
            return _error(-32600, "batch requests are not supported")
        return _result([{"signature": body["params"][0]}])

    now = [0.0]
    client = _client(single_calls_only)
    client.batching = Batching(clock=lambda: now[0])
    expected = [[{"signature": str(OWNER)}], [{"signature": str(MINT)}]]
    assert await client.signatures_for_each([(OWNER, None), (MINT, None)], limit=5) == expected
    assert await client.signatures_for_each([(OWNER, None), (MINT, None)], limit=5) == expected
    # One refused batch, then single calls only (two per listing).
    assert [isinstance(body, list) for body in bodies] == [True] + [False] * 4
    # After a while a batch is tried again (a refusal may have been a limit that passed).
    now[0] += client.batching.retry_after_seconds
    assert await client.signatures_for_each([(OWNER, None), (MINT, None)], limit=5) == expected
    assert [isinstance(body, list) for body in bodies[5:]] == [True, False, False]


async def test_the_owners_token_accounts_are_read_with_their_mints() -> None:
    account = Keypair().pubkey()
    data = bytes(MINT) + bytes(OWNER) + bytes(TOKEN_ACCOUNT_SIZE - 64)
    listed = {"pubkey": str(account), "account": {"data": [b64encode(data).decode(), "base64"]}}
    asked: list[object] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(json.loads(request.content)["params"])
        return _result({"context": {"slot": 1}, "value": [listed]})

    found = await _client(answer).token_accounts_of(OWNER)
    assert found == [OwnedTokenAccount(account, MINT)]
    assert asked == [
        [str(OWNER), {"programId": str(TOKEN_PROGRAM_ID)},
         {"encoding": "base64", "commitment": "confirmed"}],
    ]  # fmt: skip
    # An account that is no token account is an answer the client cannot use.
    listed["account"] = {"data": [b64encode(data[:82]).decode(), "base64"]}
    with pytest.raises(ChainError):
        await _client(answer).token_accounts_of(OWNER)
