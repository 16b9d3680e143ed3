"""What the JSON-RPC transport makes of a node's answers, whatever their order or shape."""

from __future__ import annotations

import json
from typing import Any

import pytest
from web3.types import RPCEndpoint

from crossfill.chains.transport import JsonRpcProvider, MalformedReply

CALLS = [(RPCEndpoint("eth_getBalance"), ["0x1", "latest"]), (RPCEndpoint("eth_call"), [{}])]


class _Answering(JsonRpcProvider):
    """The provider with the node's answer given: `answer` builds it from the request sent."""

    def __init__(self, answer: Any) -> None:
        super().__init__("http://node.invalid", timeout_seconds=1)
        self._answer = answer

    async def _post(self, body: bytes) -> bytes:
        answer = self._answer(json.loads(body))
        return answer if isinstance(answer, bytes) else json.dumps(answer).encode()


def _results(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"jsonrpc": "2.0", "id": r["id"], "result": r["method"]} for r in requests]


async def test_answers_in_another_order_are_matched_to_their_calls_by_id() -> None:
    provider = _Answering(lambda requests: _results(requests)[::-1])
    answers = await provider.make_batch_request(CALLS)
    assert [a["result"] for a in answers] == ["eth_getBalance", "eth_call"]  # type: ignore[index]


async def test_ids_echoed_as_strings_still_match() -> None:
    def stringly(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**answer, "id": str(answer["id"])} for answer in _results(requests)[::-1]]

    answers = await _Answering(stringly).make_batch_request(CALLS)
    assert [a["result"] for a in answers] == ["eth_getBalance", "eth_call"]  # type: ignore[index]


async def test_a_call_left_unanswered_gets_an_error_answer() -> None:
    answers = await _Answering(lambda requests: _results(requests)[1:]).make_batch_request(CALLS)
    assert isinstance(answers, list)
    assert "result" not in answers[0] and "error" in answers[0]
    assert answers[1]["result"] == "eth_call"


async def test_answers_without_ids_are_read_in_order() -> None:
    def idless(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"jsonrpc": "2.0", "result": r["method"]} for r in requests]

    answers = await _Answering(idless).make_batch_request(CALLS)
    assert [a["result"] for a in answers] == ["eth_getBalance", "eth_call"]  # type: ignore[index]


async def test_answers_that_are_not_objects_are_no_answers() -> None:
    answers = await _Answering(lambda _requests: [1, "two"]).make_batch_request(CALLS)
    assert isinstance(answers, list)
    assert all("error" in answer and "result" not in answer for answer in answers)


async def test_a_batch_refused_whole_comes_back_as_the_error_it_is() -> None:
    refusal = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "no batches"}}
    assert await _Answering(lambda _requests: refusal).make_batch_request(CALLS) == refusal


@pytest.mark.parametrize(
    "answer", [b"<html>502 Bad Gateway</html>", b"\xff\xfe not text", b"[1, 2]"]
)
async def test_an_answer_that_is_not_a_json_rpc_object_is_malformed(answer: bytes) -> None:
    provider = _Answering(lambda _request: answer)
    with pytest.raises(MalformedReply):
        await provider.make_request(RPCEndpoint("eth_chainId"), [])
